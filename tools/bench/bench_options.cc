#include "tools/bench/bench_options.h"

#include <cstdlib>

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
  return "usage: qptwin bench TEST [flags]\n"
         "  TEST: write_bw read_bw send_bw atomic_bw write_lat read_lat send_lat atomic_lat\n"
         "  -s SIZE  -a (2 B..8 MiB)  -q QPS  -t TX_DEPTH  -l POST_LIST  -Q CQ_MOD  -n ITERS\n"
         "  -m MTU (256..4096)  -c RC|UC|UD  -I INLINE  -e (CQ events)  -o OUTS  -d DEVICE\n"
         "  --backend model|hw  --profile P  --json  --csv  --plot FILE.svg\n"
         "  --sweep-depth D1,D2,...  (bandwidth vs tx depth)\n"
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

bool ParseBenchArgs(const std::vector<std::string>& args, BenchOptions* o, std::string* error) {
  BenchOptions r;
  bool have_test = false;
  bool size_set = false, depth_set = false, iters_set = false, cqmod_set = false;
  bool port_set = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string* v) {
      if (i + 1 >= args.size()) {
        *error = "flag " + a + " needs a value";
        return false;
      }
      *v = args[++i];
      return true;
    };
    std::string v;
    auto bad = [&](const std::string& what) {
      *error = "bad value '" + v + "' for " + a + " (" + what + ")";
      return false;
    };
    if (a == "-s" || a == "--size") {
      if (!value(&v)) return false;
      if (!ParseU64(v, &r.size) || r.size == 0 || r.size > (uint64_t{1} << 30)) {
        return bad("1..1073741824 bytes");
      }
      size_set = true;
    } else if (a == "-a" || a == "--all") {
      r.all_sizes = true;
    } else if (a == "-q" || a == "--qp") {
      if (!value(&v) || !ParseInt(v, 1, 1024, &r.qps)) return v.empty() ? false : bad("1..1024");
    } else if (a == "-t" || a == "--tx-depth") {
      if (!value(&v) || !ParseInt(v, 1, 16384, &r.tx_depth)) return v.empty() ? false : bad("1..16384");
      depth_set = true;
    } else if (a == "-l" || a == "--post_list") {
      if (!value(&v) || !ParseInt(v, 1, 1024, &r.post_list)) return v.empty() ? false : bad("1..1024");
    } else if (a == "-Q" || a == "--cq-mod") {
      if (!value(&v) || !ParseInt(v, 1, 16384, &r.cq_mod)) return v.empty() ? false : bad("1..16384");
      cqmod_set = true;
    } else if (a == "-n" || a == "--iters") {
      if (!value(&v)) return false;
      if (!ParseU64(v, &r.iters) || r.iters < 1 || r.iters > 100'000'000) return bad("1..100000000");
      iters_set = true;
    } else if (a == "-m" || a == "--mtu") {
      if (!value(&v)) return false;
      uint64_t m = 0;
      if (!ParseU64(v, &m) || (m != 256 && m != 512 && m != 1024 && m != 2048 && m != 4096)) {
        return bad("256, 512, 1024, 2048 or 4096");
      }
      r.mtu = static_cast<uint32_t>(m);
    } else if (a == "-c" || a == "--connection") {
      if (!value(&v)) return false;
      if (EqualsIgnoreCase(v, "RC")) r.conn = QpType::kRc;
      else if (EqualsIgnoreCase(v, "UC")) r.conn = QpType::kUc;
      else if (EqualsIgnoreCase(v, "UD")) r.conn = QpType::kUd;
      else return bad("RC, UC or UD");
    } else if (a == "-I" || a == "--inline_size") {
      if (!value(&v) || !ParseInt(v, 0, 4096, &r.inline_size)) return v.empty() ? false : bad("0..4096");
    } else if (a == "-o" || a == "--outs") {
      if (!value(&v) || !ParseInt(v, 1, 255, &r.outs)) return v.empty() ? false : bad("1..255");
    } else if (a == "-e" || a == "--events") {
      r.events = true;
    } else if (a == "-d" || a == "--ib-dev") {
      if (!value(&r.device)) return false;
    } else if (a == "--backend") {
      if (!value(&v)) return false;
      if (v != "model" && v != "hw") return bad("model or hw");
      r.backend = v;
    } else if (a == "--profile") {
      if (!value(&r.profile)) return false;
    } else if (a == "--json") {
      r.json = true;
    } else if (a == "--csv") {
      r.csv = true;
    } else if (a == "--plot") {
      if (!value(&r.plot)) return false;
    } else if (a == "--sweep-depth") {
      if (!value(&v)) return false;
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
    } else if (a == "--poll-step-ns") {
      if (!value(&v)) return false;
      if (!ParseU64(v, &r.lat_poll_ns) || r.lat_poll_ns == 0) return bad(">= 1");
    } else if (a == "--server") {
      r.server = true;
    } else if (a == "--connect") {
      if (!value(&r.connect)) return false;
      if (r.connect.empty() || r.connect[0] == '-') {
        v = r.connect;
        return bad("a host name or address");
      }
    } else if (a == "-p" || a == "--port") {
      if (!value(&v) || !ParseInt(v, 1, 65535, &r.port)) return v.empty() ? false : bad("1..65535");
      port_set = true;
    } else if (!a.empty() && a[0] == '-') {
      *error = "unknown flag " + a;
      return false;
    } else if (!have_test) {
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
        *error = "unknown test '" + a + "' (write_bw read_bw send_bw atomic_bw write_lat read_lat "
                 "send_lat atomic_lat)";
        return false;
      }
      have_test = true;
    } else {
      *error = "unexpected argument '" + a + "'";
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
  if (r.post_list > r.tx_depth) {
    *error = "-l (post list) cannot exceed -t (tx depth)";
    return false;
  }
  *o = r;
  return true;
}

}  // namespace qptwin::bench
