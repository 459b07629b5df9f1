// qptwin::sc::Nic's elaboration (nic.h contract 1), one case per process (SystemC builds
// modules once): nic_config_test CASE, run by nic_config_test.sh.
//   ok          two Nics on one Fabric: indices 0 and 1, the devices answer QUERY_PORT
//   mismatch    two Nics of different profiles: a SystemC error naming both
//   unknown     an unknown profile: a SystemC error naming it
//   seventeen   a 17th Nic: a SystemC error
//   early       a Nic destroyed before elaboration: a SystemC error naming its index
//   coarse      a time resolution of 10 ns: a SystemC error naming it
//   verbs       as ok, beside a verbs Backend whose Advance in sc_main runs the driver's
//               thread first: its commands wait for their turn, answered after it
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "model/engine/command_port.h"
#include "model/model_backend.h"
#include "model/systemc/nic.h"

namespace {

// Memory that answers nothing: the cases make no DMA.
struct NoMemory : sc_core::sc_module {
  tlm_utils::multi_passthrough_target_socket<NoMemory> port{"port"};
  explicit NoMemory(sc_core::sc_module_name n) : sc_module(n) {
    port.register_b_transport(this, &NoMemory::BTransport);
  }
  void BTransport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time&) {
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  }
};

// Asks each NIC its port (QUERY_PORT) and prints the answer.
struct Driver : sc_core::sc_module {
  std::vector<std::unique_ptr<tlm_utils::simple_initiator_socket<Driver>>> mmio;
  SC_HAS_PROCESS(Driver);
  Driver(sc_core::sc_module_name n, int nics) : sc_module(n) {
    for (int i = 0; i < nics; ++i) {
      mmio.push_back(std::make_unique<tlm_utils::simple_initiator_socket<Driver>>(
          ("mmio" + std::to_string(i)).c_str()));
    }
    SC_THREAD(Main);
  }
  bool Access(int i, tlm::tlm_command c, uint64_t off, uint8_t* d, unsigned len) {
    tlm::tlm_generic_payload gp;
    gp.set_command(c);
    gp.set_address(off);
    gp.set_data_ptr(d);
    gp.set_data_length(len);
    gp.set_streaming_width(len);
    sc_core::sc_time t = sc_core::SC_ZERO_TIME;
    (*mmio[i])->b_transport(gp, t);
    return gp.is_response_ok();
  }
  void Main() {
    namespace cmd = qptwin::model::engine::command;
    for (size_t i = 0; i < mmio.size(); ++i) {
      uint8_t w[8] = {1};
      uint32_t op = static_cast<uint32_t>(cmd::Op::kQueryPort), status = ~0u;
      uint64_t gid_lo = 0;
      const bool ok = Access(static_cast<int>(i), tlm::TLM_WRITE_COMMAND, cmd::kInOffset, w, 8) &&
                      Access(static_cast<int>(i), tlm::TLM_WRITE_COMMAND, cmd::kOpOffset,
                             reinterpret_cast<uint8_t*>(&op), 4) &&
                      Access(static_cast<int>(i), tlm::TLM_READ_COMMAND, cmd::kStatusOffset,
                             reinterpret_cast<uint8_t*>(&status), 4) &&
                      Access(static_cast<int>(i), tlm::TLM_READ_COMMAND, cmd::kOutOffset + 8,
                             reinterpret_cast<uint8_t*>(&gid_lo), 8);
      std::printf("nic %zu: query_port %s status %u gid_lo %016llx\n", i, ok ? "answered" : "failed",
                  status, static_cast<unsigned long long>(gid_lo));
    }
    sc_core::sc_stop();
  }
};

}  // namespace

int sc_main(int argc, char** argv) {
  const std::string c = argc > 1 ? argv[1] : "";
  if (c == "coarse") sc_core::sc_set_time_resolution(10, sc_core::SC_NS);
  std::unique_ptr<qptwin::Backend> verbs;
  if (c == "verbs") {
    qptwin::model::ModelOptions o;
    o.profile = "cx6-100g";
    std::string why;
    verbs = qptwin::model::MakeModelBackend(o, &why);
    if (!verbs) {
      std::fprintf(stderr, "nic_config_test: %s\n", why.c_str());
      return 2;
    }
  }
  int n = 2;
  std::vector<std::string> profiles = {"cx6-100g", "cx6-100g"};
  if (c == "mismatch") profiles = {"cx6-100g", "rxe"};
  if (c == "unknown") profiles = {"no-such-nic", "no-such-nic"};
  if (c == "seventeen") {
    n = 17;
    profiles.assign(17, "rxe");
  }
  if (c != "ok" && c != "mismatch" && c != "unknown" && c != "seventeen" && c != "early" &&
      c != "coarse" && c != "verbs") {
    std::fprintf(stderr, "usage: nic_config_test ok|mismatch|unknown|seventeen|early|coarse|verbs\n");
    return 2;
  }
  if (c == "early") qptwin::sc::Nic scratch("scratch");  // gone at once
  NoMemory memory("memory");
  std::vector<std::unique_ptr<qptwin::sc::Nic>> nics;
  for (int i = 0; i < n; ++i) {
    nics.push_back(std::make_unique<qptwin::sc::Nic>(("nic" + std::to_string(i)).c_str(),
                                                     qptwin::sc::NicConfig{profiles[i]}));
  }
  qptwin::sc::Fabric fabric("fabric", n + (c == "early" ? 1 : 0));  // early: index 0 unused
  Driver driver("driver", n);
  for (int i = 0; i < n; ++i) {
    nics[i]->dma.bind(memory.port);
    nics[i]->net_out.bind(fabric.in(nics[i]->index()));
    fabric.out(nics[i]->index()).bind(nics[i]->net_in);
    driver.mmio[i]->bind(nics[i]->mmio);
    std::printf("%s: index %d\n", nics[i]->name(), nics[i]->index());
  }
  if (verbs) {
    verbs->Advance(1000);  // a call begun outside the simulation: its sc_start elaborates
    std::printf("verbs Advance returned at %s\n", sc_core::sc_time_stamp().to_string().c_str());
  }
  sc_core::sc_start();
  std::printf("nic_config_test: %s done\n", c.c_str());
  return 0;
}
