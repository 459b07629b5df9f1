// Out-of-band exchange for `qptwin bench --server` / `--connect HOST`: a TCP connection
// between the two processes (or hosts) and the small text messages they send over it, as
// perftest exchanges its connection data over TCP before the RDMA test.
//
// Wire format (version 1): one line per message, printable ASCII, at most kMaxLine bytes,
//   "qptwin-bench-oob 1 KIND key=value key=value ...\n"
// KIND is params, qp, start, go, done, end or error ("error" carries free text instead of
// key=value pairs). Numbers are decimal; gid is 32 hex digits; addr and rkey are hex.
//
// Contract:
//  1. No exceptions; every failure is an errno and one line in *error naming what went wrong
//     (connection refused, peer closed, timeout, a line that is not this protocol, another
//     protocol version, a missing or bad field).
//  2. Nothing here knows about verbs: QpMessage holds plain numbers, so the unit is tested
//     without a device (oob_test.cc).
//  3. SIGPIPE is never raised (MSG_NOSIGNAL); descriptors are closed by the destructors.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace qptwin::hw::oob {

constexpr int kDefaultPort = 18515;  // perftest's
constexpr int kVersion = 1;
constexpr size_t kMaxLine = 1024;
constexpr const char* kMagic = "qptwin-bench-oob";

// The test parameters the client sends; the server must have been started with the same.
struct Params {
  std::string test;
  uint64_t size = 0;
  bool all_sizes = false;
  uint64_t iters = 0;
  int qps = 0;
  int tx_depth = 0;
  std::string conn;  // RC, UC, UD
  uint32_t mtu = 0;  // -m; 0 = the port's
};

// What the peer needs for one QP.
struct QpMessage {
  uint32_t qp_num = 0;
  uint32_t psn = 0;  // 24 bits: the sender's first send PSN
  std::array<uint8_t, 16> gid{};
  int gid_index = 0;
  uint16_t lid = 0;
  uint8_t link_layer = 0;  // spec LinkLayer: 0 unspecified, 1 InfiniBand, 2 Ethernet
  uint32_t mtu = 0;        // path MTU bytes the sender would use
  uint64_t addr = 0;       // buffer address
  uint32_t rkey = 0;
  uint64_t len = 0;        // buffer length
};

// A decoded line: its kind and fields (or, for "error", the text).
struct Message {
  std::string kind;
  std::map<std::string, std::string> fields;
  std::string text;
};

std::string EncodeParams(const Params& p);
std::string EncodeQp(const QpMessage& q);
// kind: start, go, done, end; fields as given ("size" -> "4096").
std::string EncodeControl(const std::string& kind,
                          const std::map<std::string, std::string>& fields = {});
std::string EncodeError(const std::string& text);

// Splits a line (without its newline). 0, or EPROTO with *error saying why (not this
// protocol, another version, a malformed field).
[[nodiscard]] int ParseLine(const std::string& line, Message* out, std::string* error);
[[nodiscard]] int DecodeParams(const Message& m, Params* out, std::string* error);
[[nodiscard]] int DecodeQp(const Message& m, QpMessage* out, std::string* error);

// The first option in which the server's (`mine`) and the client's (`theirs`) parameters
// differ, as one line naming the flag ("-s (size): server 65536, client 4096"); "" if none.
std::string FirstDifference(const Params& mine, const Params& theirs);

// One connected TCP stream of lines.
class Conn {
 public:
  Conn() = default;
  explicit Conn(int fd) : fd_(fd) {}
  ~Conn();
  Conn(Conn&& o) noexcept;
  Conn& operator=(Conn&& o) noexcept;
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  bool open() const { return fd_ >= 0; }
  const std::string& peer() const { return peer_; }
  void set_peer(const std::string& p) { peer_ = p; }

  // Sends `line` (a trailing newline is added). 0 or errno.
  [[nodiscard]] int Send(const std::string& line, std::string* error);
  // Receives one line (without its newline). timeout_ms < 0 waits for ever; 0 only looks.
  // ETIMEDOUT when nothing complete came in time, ECONNRESET when the peer closed, EPROTO
  // for a line that is too long or not printable text.
  [[nodiscard]] int RecvLine(std::string* line, int timeout_ms, std::string* error);
  // RecvLine + ParseLine; an "error" message from the peer becomes EPROTO with its text.
  [[nodiscard]] int Recv(Message* m, int timeout_ms, std::string* error);
  // Recv that expects `kind`.
  [[nodiscard]] int Expect(const std::string& kind, Message* m, int timeout_ms,
                           std::string* error);

 private:
  int fd_ = -1;
  std::string buf_;
  std::string peer_;
};

// A listening socket on all addresses (IPv4 and, where available, IPv6).
class Listener {
 public:
  Listener() = default;
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // port 0 picks a free one (see port()). 0 or errno (EADDRINUSE, ...).
  [[nodiscard]] int Listen(int port, std::string* error);
  int port() const { return port_; }
  // Accepts one connection. timeout_ms < 0 waits for ever. 0, ETIMEDOUT or errno.
  [[nodiscard]] int Accept(int timeout_ms, Conn* out, std::string* error);

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Connects to host:port (name or address, IPv4 or IPv6), trying every address the name has.
// 0 or errno (ECONNREFUSED, ETIMEDOUT, EHOSTUNREACH, ...) with *error naming host and port.
[[nodiscard]] int Connect(const std::string& host, int port, int timeout_ms, Conn* out,
                          std::string* error);

}  // namespace qptwin::hw::oob
