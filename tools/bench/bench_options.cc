#include "tools/bench/bench_options.h"

#include <cstdlib>

#include "tools/bench/bench_sweep.h"
#include "tools/cli/backend_factory.h"
#include "tools/cli/flags.h"

namespace qptwin::bench {
namespace {

struct TestName {
  const char* name;
  Op op;
  Kind kind;
};
constexpr TestName kTests[] = {
    {"write_bw", Op::kWrite, Kind::kBw},   {"read_bw", Op::kRead, Kind::kBw},
    {"send_bw", Op::kSend, Kind::kBw},     {"atomic_bw", Op::kAtomic, Kind::kBw},
    {"write_lat", Op::kWrite, Kind::kLat}, {"read_lat", Op::kRead, Kind::kLat},
    {"send_lat", Op::kSend, Kind::kLat},   {"atomic_lat", Op::kAtomic, Kind::kLat},
};

bool ParseU64(const std::string& s, uint64_t* out) {
  if (s.empty() || s[0] == '-') return false;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end == nullptr || *end != '\0') return false;
  *out = v;
  return true;
}

bool ParseInt(const std::string& s, int lo, int hi, int* out) {
  uint64_t v = 0;
  if (!ParseU64(s, &v) || v < static_cast<uint64_t>(lo) || v > static_cast<uint64_t>(hi)) {
    return false;
  }
  *out = static_cast<int>(v);
  return true;
}

}  // namespace

std::string BenchUsage() {
  return "usage: qptwin bench TEST [flags]    (or: qptwin bench report [--out DIR] [--speed-vs-qps], the Markdown\n"
         "                                   report of docs/bench/REPORT.md)\n"
         "  TEST: write_bw read_bw send_bw atomic_bw write_lat read_lat send_lat atomic_lat\n"
         "  -s SIZE  -a (2 B..8 MiB)  -q QPS  -t TX_DEPTH  -l POST_LIST  -Q CQ_MOD  -n ITERS\n"
         "  -m MTU (256..4096)  -c RC|UC|UD  -I INLINE  -e (CQ events)  -o OUTS\n"
         "  --backend model|hw  --profile P (model)  -d|--device DEVICE  --json  --csv\n"
         "  --plot FILE.svg  --vs-systemc (model: the speed against SystemC's own, measured\n"
         "                   here before and after the run)\n"
         "  --sweep-depth D1,D2,...  (bandwidth vs tx depth)\n"
         "  --threads T  (model, bandwidth tests: T simulated host threads post in parallel,\n"
         "                QP i on thread i mod T, each with its own CQ)\n"
         "  --sweep-qps Q1,Q2,...  --sweep-mr-size B1,B2,...  --mr-size B  --cache on|off\n"
         "                           (throughput vs QPs / registered memory; --cache: model)\n"
         "  two processes or hosts (--backend hw; connection data over TCP, as perftest):\n"
         "  --server [-p|--port N]          wait for one client (port default 18515)\n"
         "  --connect HOST [-p|--port N]    run the test against HOST's --server and print it\n"
         "  (start both with the same TEST, -s/-a, -n, -q, -t, -c and -m)\n";
}

std::vector<uint64_t> AllSizes() {
  std::vector<uint64_t> v;
  for (uint64_t s = 2; s <= (uint64_t{8} << 20); s *= 2) v.push_back(s);
  return v;
}

namespace {

// One spec per perftest flag; long names are aliases of the short ones.
const std::vector<cli::FlagSpec>& Specs() {
  static const std::vector<cli::FlagSpec> specs = [] {
    std::vector<cli::FlagSpec> v = {
        {"-s"},          {"--size", true, "-s"},        {"-a", false},
        {"--all", false, "-a"},                          {"-q"},
        {"--qp", true, "-q"},                            {"-t"},
        {"--tx-depth", true, "-t"},                      {"-l"},
        {"--post_list", true, "-l"},                     {"-Q"},
        {"--cq-mod", true, "-Q"},                        {"-n"},
        {"--iters", true, "-n"},                         {"-m"},
        {"--mtu", true, "-m"},                           {"-c"},
        {"--connection", true, "-c"},                    {"-I"},
        {"--inline_size", true, "-I"},                   {"-o"},
        {"--outs", true, "-o"},                          {"-e", false},
        {"--events", false, "-e"},                       {"-d", true, "--device"},
        {"--ib-dev", true, "--device"},                  {"--json", false},
        {"--csv", false},                                {"--plot"},
        {"--sweep-depth"},                               {"--poll-step-ns"},
        {"--server", false},                             {"--connect"},
        {"-p"},                                          {"--port", true, "-p"},
        {"--sweep-qps"},                                 {"--sweep-mr-size"},
        {"--mr-size"},                                   {"--cache"},
        {"--threads"},                                   {"--vs-systemc", false},
    };
    for (const cli::FlagSpec& f : cli::BackendFlags()) v.push_back(f);
    return v;
  }();
  return specs;
}

}  // namespace

bool ParseBenchArgs(const std::vector<std::string>& args, BenchOptions* o, std::string* error) {
  BenchOptions r;
  auto flags = cli::ParseFlags(args, Specs(), error, /*max_positional=*/1);
  if (!flags) return false;
  std::string v;
  const char* flag = "";
  // The value of `name` if given (true), with v/flag set for bad().
  auto given = [&](const char* name) {
    if (!flags->Has(name)) return false;
    flag = name;
    v = flags->Get(name);
    return true;
  };
  auto bad = [&](const std::string& what) {
    *error = "bad value '" + v + "' for " + flag + " (" + what + ")";
    return false;
  };
  if (given("-s") && (!ParseU64(v, &r.size) || r.size == 0 || r.size > (uint64_t{1} << 30))) {
    return bad("1..1073741824 bytes");
  }
  const bool size_set = flags->Has("-s");
  r.all_sizes = flags->Has("-a");
  if (given("-q") && !ParseInt(v, 1, kMaxBenchQps, &r.qps)) return bad("1..65536");
  if (given("-t") && !ParseInt(v, 1, 16384, &r.tx_depth)) return bad("1..16384");
  const bool depth_set = flags->Has("-t");
  if (given("-l") && !ParseInt(v, 1, 1024, &r.post_list)) return bad("1..1024");
  if (given("-Q") && !ParseInt(v, 1, 16384, &r.cq_mod)) return bad("1..16384");
  const bool cqmod_set = flags->Has("-Q");
  if (given("-n") && (!ParseU64(v, &r.iters) || r.iters < 1 || r.iters > 100'000'000)) {
    return bad("1..100000000");
  }
  const bool iters_set = flags->Has("-n");
  if (given("-m")) {
    uint64_t m = 0;
    if (!ParseU64(v, &m) || (m != 256 && m != 512 && m != 1024 && m != 2048 && m != 4096)) {
      return bad("256, 512, 1024, 2048 or 4096");
    }
    r.mtu = static_cast<uint32_t>(m);
  }
  if (given("-c")) {
    if (EqualsIgnoreCase(v, "RC")) r.conn = QpType::kRc;
    else if (EqualsIgnoreCase(v, "UC")) r.conn = QpType::kUc;
    else if (EqualsIgnoreCase(v, "UD")) r.conn = QpType::kUd;
    else return bad("RC, UC or UD");
  }
  if (given("-I") && !ParseInt(v, 0, 4096, &r.inline_size)) return bad("0..4096");
  if (given("-o") && !ParseInt(v, 1, 255, &r.outs)) return bad("1..255");
  if (given("--threads") && !ParseInt(v, 1, kMaxBenchThreads, &r.threads)) return bad("1..4096");
  r.events = flags->Has("-e");
  r.vs_systemc = flags->Has("--vs-systemc");
  cli::BackendSpec spec{r.backend, r.profile, r.device, 2};
  if (!cli::BackendSpecFromFlags(*flags, &spec, error)) return false;
  r.backend = spec.kind;
  r.profile = spec.profile;
  r.device = spec.device;
  r.json = flags->Has("--json");
  r.csv = flags->Has("--csv");
  r.plot = flags->Get("--plot");
  if (given("--plot") && v.empty()) return bad("an output file name, FILE.svg");
  if (given("--sweep-depth")) {
    size_t pos = 0;
    while (pos <= v.size()) {
      size_t comma = v.find(',', pos);
      std::string item = v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      int d = 0;
      if (!ParseInt(item, 1, 16384, &d)) return bad("comma-separated depths 1..16384");
      r.depth_sweep.push_back(d);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  if (!ParseCacheFlags(*flags, &r, error)) return false;  // bench_sweep.cc
  if (given("--poll-step-ns") && (!ParseU64(v, &r.lat_poll_ns) || r.lat_poll_ns == 0)) {
    return bad(">= 1");
  }
  r.server = flags->Has("--server");
  if (given("--connect")) {
    r.connect = v;
    if (r.connect.empty() || r.connect[0] == '-') return bad("a host name or address");
  }
  if (given("-p") && !ParseInt(v, 1, 65535, &r.port)) return bad("1..65535");
  const bool port_set = flags->Has("-p");
  const bool have_test = !flags->positional().empty();
  if (have_test) {
    const std::string& a = flags->positional()[0];
    bool found = false;
    for (const TestName& t : kTests) {
      if (a == t.name) {
        r.test = t.name;
        r.op = t.op;
        r.kind = t.kind;
        found = true;
      }
    }
    if (!found) {
      *error = "unknown test '" + a + "' (valid: write_bw read_bw send_bw atomic_bw write_lat "
               "read_lat send_lat atomic_lat)";
      return false;
    }
  }
  if (!have_test) {
    *error = "missing TEST (write_bw read_bw send_bw atomic_bw write_lat read_lat send_lat atomic_lat)";
    return false;
  }
  if (r.kind == Kind::kLat) {
    if (!size_set) r.size = 2;
    if (!depth_set) r.tx_depth = 1;
    if (!iters_set) r.iters = 1000;
    if (!cqmod_set) r.cq_mod = 1;
  }
  if (r.op == Op::kAtomic) r.size = 8;  // atomics move 8 bytes
  if (r.conn == QpType::kUd && r.op != Op::kSend) {
    *error = "-c UD supports only send_bw and send_lat";
    return false;
  }
  if (r.conn == QpType::kUc && (r.op == Op::kRead || r.op == Op::kAtomic)) {
    *error = "-c UC supports WRITE and SEND only";
    return false;
  }
  if (r.vs_systemc && r.backend != "model") {
    *error = "--vs-systemc is for --backend model (SystemC runs only the model)";
    return false;
  }
  if (r.server && !r.connect.empty()) {
    *error = "--server and --connect exclude each other (one process listens, the other connects)";
    return false;
  }
  if (port_set && !r.two_process()) {
    *error = "--port needs --server or --connect";
    return false;
  }
  if (r.two_process() && r.backend != "hw") {
    *error = std::string(r.server ? "--server" : "--connect") +
             " needs --backend hw (the model runs both ends in one process)";
    return false;
  }
  if (r.two_process() && !r.depth_sweep.empty()) {
    *error = "--sweep-depth runs in one process only (not with --server/--connect)";
    return false;
  }
  if (r.threads > 1) {
    // bench_run.h contract 6: simulated host threads; a real device has real ones.
    std::string why;
    if (r.backend != "model") why = "the model's simulated host threads (--backend model)";
    else if (r.kind != Kind::kBw) why = "bandwidth tests only (write_bw read_bw send_bw atomic_bw)";
    else if (r.events) why = "polling threads only (not with -e)";
    if (!why.empty()) {
      *error = "--threads: " + why;
      return false;
    }
  }
  if (r.post_list > r.tx_depth) {
    *error = "-l (post list) cannot exceed -t (tx depth)";
    return false;
  }
  *o = r;
  return true;
}

}  // namespace qptwin::bench
