#include "model/systemc/nic.h"

#include <string>
#include <utility>
#include <vector>

#include "model/model_backend.h"
#include "spec/backend.h"

namespace qptwin::sc {

// Contract 1: the Nics of the process and the one Backend whose devices they are.
struct Nic::Board {
  std::vector<Nic*> nics;  // by index; nullptr once destroyed
  std::unique_ptr<Backend> backend;
  bool made = false;  // before_end_of_elaboration has run (the Backend made, or refused)

  static const std::shared_ptr<Board>& Current() {
    static const std::shared_ptr<Board> board = std::make_shared<Board>();
    return board;
  }
};

Nic::Nic(sc_core::sc_module_name name, const NicConfig& config)
    : NicSlot(name, static_cast<int>(Board::Current()->nics.size()), nullptr),
      config_(config),
      board_(Board::Current()) {
  if (board_->made) {
    SC_REPORT_ERROR("qptwin::sc::Nic", "made after elaboration: make every Nic before sc_start");
  }
  if (index() >= model::sim::Platform::kSlots) {
    SC_REPORT_ERROR("qptwin::sc::Nic", ("at most " + std::to_string(model::sim::Platform::kSlots) +
                                        " NICs in a process").c_str());
  }
  board_->nics.push_back(this);
  if (index() == 0) {  // contract 7: the World's own processes, children of the first Nic
    world_blocks_ = std::make_unique<model::sim::ScClock::BlockProcesses>(
        model::sim::ScClock::BlockProcesses::Of::kWorld);
    SetWorldBlocks(world_blocks_.get());
  }
}

Nic::~Nic() {
  // Contract 1: the devices go before the first of their modules (the engine's NICs detach
  // from their slots as they go).
  board_->backend.reset();
  board_->nics[static_cast<size_t>(index())] = nullptr;
}

Backend* Nic::backend() const { return board_->backend.get(); }

void Nic::before_end_of_elaboration() {
  if (board_->made) return;  // the first Nic alive makes the Backend for all of them
  board_->made = true;
  std::vector<model::SlotPorts> slots;
  for (size_t k = 0; k < board_->nics.size(); ++k) {
    Nic* nic = board_->nics[k];
    if (nic == nullptr) {  // contract 1: index k is a device and a Fabric port
      SC_REPORT_ERROR("qptwin::sc::Nic",
                      ("the Nic of index " + std::to_string(k) +
                       " was destroyed before elaboration: every Nic made lives through it")
                          .c_str());
      return;
    }
    if (nic->profile() != config_.profile) {
      SC_REPORT_ERROR("qptwin::sc::Nic",
                      (std::string(nic->name()) + " has profile '" + nic->profile() + "', " +
                       name() + " '" + config_.profile +
                       "': the NICs of a process share one profile")
                          .c_str());
      return;
    }
    slots.push_back(model::SlotPorts{nic, &nic->own_cpu_path()});
  }
  model::ModelOptions opts;
  opts.profile = config_.profile;
  std::string why;
  board_->backend = model::MakeModelBackendOn(opts, slots, &why);
  if (!board_->backend) SC_REPORT_ERROR("qptwin::sc::Nic", why.c_str());
}

}  // namespace qptwin::sc
