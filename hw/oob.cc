#include "hw/oob.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace qptwin::hw::oob {
namespace {

std::string Errno(int e) { return std::strerror(e); }

std::string Hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

bool ParseNum(const std::string& s, uint64_t max, uint64_t* out) {
  if (s.empty() || s[0] == '-' || s[0] == '+' || s[0] == ' ') return false;
  errno = 0;
  char* end = nullptr;
  int base = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10;
  unsigned long long v = std::strtoull(s.c_str(), &end, base);
  if (errno != 0 || end == nullptr || *end != '\0' || v > max) return false;
  *out = v;
  return true;
}

// Reads field `key` of `m` as a number <= max into *out.
template <typename T>
int Field(const Message& m, const char* key, uint64_t max, T* out, std::string* error) {
  auto it = m.fields.find(key);
  if (it == m.fields.end()) {
    *error = "peer's '" + m.kind + "' message lacks field '" + key + "'";
    return EPROTO;
  }
  uint64_t v = 0;
  if (!ParseNum(it->second, max, &v)) {
    *error = "peer's '" + m.kind + "' message has a bad " + key + " '" + it->second + "'";
    return EPROTO;
  }
  *out = static_cast<T>(v);
  return 0;
}

int TextField(const Message& m, const char* key, std::string* out, std::string* error) {
  auto it = m.fields.find(key);
  if (it == m.fields.end() || it->second.empty()) {
    *error = "peer's '" + m.kind + "' message lacks field '" + key + "'";
    return EPROTO;
  }
  *out = it->second;
  return 0;
}

std::string Printable(const std::string& s) {
  std::string r;
  for (char c : s.substr(0, 60)) {
    r += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  if (s.size() > 60) r += "...";
  return r;
}

int64_t NowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

// Waits until fd is readable (or writable); 0, ETIMEDOUT or errno.
int WaitFd(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  const int64_t deadline = timeout_ms < 0 ? 0 : NowMs() + timeout_ms;
  for (;;) {
    int left = timeout_ms < 0 ? -1 : static_cast<int>(std::max<int64_t>(0, deadline - NowMs()));
    int n = ::poll(&p, 1, left);
    if (n > 0) return 0;
    if (n == 0) return ETIMEDOUT;
    if (errno != EINTR) return errno;
  }
}

}  // namespace

std::string EncodeParams(const Params& p) {
  std::ostringstream s;
  s << kMagic << ' ' << kVersion << " params test=" << p.test << " size=" << p.size
    << " all=" << (p.all_sizes ? 1 : 0) << " iters=" << p.iters << " qps=" << p.qps
    << " tx_depth=" << p.tx_depth << " conn=" << p.conn << " mtu=" << p.mtu;
  return s.str();
}

std::string EncodeQp(const QpMessage& q) {
  static const char kHex[] = "0123456789abcdef";
  std::string gid;
  for (uint8_t b : q.gid) {
    gid += kHex[b >> 4];
    gid += kHex[b & 15];
  }
  std::ostringstream s;
  s << kMagic << ' ' << kVersion << " qp qpn=" << q.qp_num << " psn=" << q.psn << " gid=" << gid
    << " gid_index=" << q.gid_index << " lid=" << q.lid
    << " link=" << static_cast<int>(q.link_layer) << " mtu=" << q.mtu << " addr=" << Hex(q.addr)
    << " rkey=" << Hex(q.rkey) << " len=" << q.len;
  return s.str();
}

std::string EncodeControl(const std::string& kind, const std::map<std::string, std::string>& f) {
  std::string s = std::string(kMagic) + " " + std::to_string(kVersion) + " " + kind;
  for (const auto& [k, v] : f) s += " " + k + "=" + v;
  return s;
}

std::string EncodeError(const std::string& text) {
  std::string clean;
  for (char c : text) clean += (c >= 0x20 && c < 0x7f) ? c : ' ';
  if (clean.size() > kMaxLine - 64) clean.resize(kMaxLine - 64);
  return std::string(kMagic) + " " + std::to_string(kVersion) + " error " + clean;
}

int ParseLine(const std::string& line, Message* out, std::string* error) {
  std::istringstream in(line);
  std::string magic, version, kind;
  in >> magic >> version >> kind;
  if (magic != kMagic) {
    *error = "the peer is not a qptwin bench peer (it sent '" + Printable(line) + "')";
    return EPROTO;
  }
  if (version != std::to_string(kVersion)) {
    *error = "the peer speaks protocol version " + Printable(version) + ", this is version " +
             std::to_string(kVersion) + " (use the same qptwin on both sides)";
    return EPROTO;
  }
  if (kind.empty()) {
    *error = "the peer sent a message without a kind";
    return EPROTO;
  }
  Message m;
  m.kind = kind;
  if (kind == "error") {
    std::string rest;
    std::getline(in, rest);
    size_t b = rest.find_first_not_of(' ');
    m.text = b == std::string::npos ? "" : rest.substr(b);
    *out = m;
    return 0;
  }
  std::string kv;
  while (in >> kv) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      *error = "the peer's '" + kind + "' message has a malformed field '" + Printable(kv) + "'";
      return EPROTO;
    }
    m.fields[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  *out = m;
  return 0;
}

int DecodeParams(const Message& m, Params* out, std::string* error) {
  if (m.kind != "params") {
    *error = "expected the peer's 'params' message, got '" + m.kind + "'";
    return EPROTO;
  }
  Params p;
  int all = 0;
  if (int rc = TextField(m, "test", &p.test, error)) return rc;
  if (int rc = Field(m, "size", uint64_t{1} << 40, &p.size, error)) return rc;
  if (int rc = Field(m, "all", 1, &all, error)) return rc;
  if (int rc = Field(m, "iters", UINT64_MAX, &p.iters, error)) return rc;
  if (int rc = Field(m, "qps", 1 << 20, &p.qps, error)) return rc;
  if (int rc = Field(m, "tx_depth", 1 << 20, &p.tx_depth, error)) return rc;
  if (int rc = TextField(m, "conn", &p.conn, error)) return rc;
  if (int rc = Field(m, "mtu", 1 << 20, &p.mtu, error)) return rc;
  p.all_sizes = all != 0;
  *out = p;
  return 0;
}

int DecodeQp(const Message& m, QpMessage* out, std::string* error) {
  if (m.kind != "qp") {
    *error = "expected the peer's 'qp' message, got '" + m.kind + "'";
    return EPROTO;
  }
  QpMessage q;
  if (int rc = Field(m, "qpn", 0xffffff, &q.qp_num, error)) return rc;
  if (int rc = Field(m, "psn", 0xffffff, &q.psn, error)) return rc;
  if (int rc = Field(m, "gid_index", 255, &q.gid_index, error)) return rc;
  if (int rc = Field(m, "lid", 0xffff, &q.lid, error)) return rc;
  if (int rc = Field(m, "link", 2, &q.link_layer, error)) return rc;
  if (int rc = Field(m, "mtu", 4096, &q.mtu, error)) return rc;
  if (int rc = Field(m, "addr", UINT64_MAX, &q.addr, error)) return rc;
  if (int rc = Field(m, "rkey", 0xffffffff, &q.rkey, error)) return rc;
  if (int rc = Field(m, "len", UINT64_MAX, &q.len, error)) return rc;
  std::string gid;
  if (int rc = TextField(m, "gid", &gid, error)) return rc;
  auto nibble = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  bool ok = gid.size() == 32;
  for (size_t i = 0; ok && i < 16; ++i) {
    int hi = nibble(gid[2 * i]), lo = nibble(gid[2 * i + 1]);
    if (hi < 0 || lo < 0) ok = false;
    else q.gid[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  if (!ok) {
    *error = "peer's 'qp' message has a bad gid '" + Printable(gid) + "' (32 hex digits)";
    return EPROTO;
  }
  if (q.mtu != 256 && q.mtu != 512 && q.mtu != 1024 && q.mtu != 2048 && q.mtu != 4096) {
    *error = "peer's 'qp' message has a bad mtu " + std::to_string(q.mtu);
    return EPROTO;
  }
  *out = q;
  return 0;
}

std::string FirstDifference(const Params& mine, const Params& theirs) {
  auto diff = [](const std::string& flag, const std::string& a, const std::string& b) {
    return a == b ? std::string() : flag + ": server " + a + ", client " + b;
  };
  auto num = [](uint64_t v) { return std::to_string(v); };
  for (const std::string& d : {
           diff("TEST", mine.test, theirs.test),
           diff("-a (all sizes)", mine.all_sizes ? "on" : "off", theirs.all_sizes ? "on" : "off"),
           diff("-s (size)", num(mine.size), num(theirs.size)),
           diff("-n (iterations)", num(mine.iters), num(theirs.iters)),
           diff("-q (QPs)", num(mine.qps), num(theirs.qps)),
           diff("-t (tx depth)", num(mine.tx_depth), num(theirs.tx_depth)),
           diff("-c (connection type)", mine.conn, theirs.conn),
           diff("-m (MTU)", num(mine.mtu), num(theirs.mtu)),
       }) {
    if (!d.empty()) return d;
  }
  return "";
}

// ---- Conn -------------------------------------------------------------------------------

Conn::~Conn() {
  if (fd_ >= 0) ::close(fd_);
}

Conn::Conn(Conn&& o) noexcept : fd_(o.fd_), buf_(std::move(o.buf_)), peer_(std::move(o.peer_)) {
  o.fd_ = -1;
}

Conn& Conn::operator=(Conn&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    buf_ = std::move(o.buf_);
    peer_ = std::move(o.peer_);
    o.fd_ = -1;
  }
  return *this;
}

int Conn::Send(const std::string& line, std::string* error) {
  if (fd_ < 0) {
    *error = "not connected";
    return ENOTCONN;
  }
  std::string data = line + "\n";
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      *error = "sending to the peer failed: " + Errno(e);
      return e;
    }
    off += static_cast<size_t>(n);
  }
  return 0;
}

int Conn::RecvLine(std::string* line, int timeout_ms, std::string* error) {
  if (fd_ < 0) {
    *error = "not connected";
    return ENOTCONN;
  }
  const int64_t deadline = timeout_ms < 0 ? 0 : NowMs() + timeout_ms;
  for (;;) {
    size_t nl = buf_.find('\n');
    if (nl != std::string::npos) {
      *line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      if (!line->empty() && line->back() == '\r') line->pop_back();
      for (char c : *line) {
        if (c < 0x20 || c >= 0x7f) {
          *error = "the peer sent binary data, not a qptwin bench message ('" +
                   Printable(*line) + "')";
          return EPROTO;
        }
      }
      return 0;
    }
    if (buf_.size() > kMaxLine) {
      *error = "the peer sent more than " + std::to_string(kMaxLine) +
               " bytes without a newline: not a qptwin bench peer ('" + Printable(buf_) + "')";
      return EPROTO;
    }
    int left = timeout_ms < 0 ? -1 : static_cast<int>(std::max<int64_t>(0, deadline - NowMs()));
    if (int rc = WaitFd(fd_, POLLIN, left)) {
      *error = rc == ETIMEDOUT ? "no message from the peer within " +
                                     std::to_string(timeout_ms / 1000.0) + " s"
                               : "waiting for the peer failed: " + Errno(rc);
      return rc;
    }
    char tmp[512];
    ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      int e = errno;
      *error = "receiving from the peer failed: " + Errno(e);
      return e;
    }
    if (n == 0) {
      *error = "the peer closed the connection";
      return ECONNRESET;
    }
    buf_.append(tmp, static_cast<size_t>(n));
  }
}

int Conn::Recv(Message* m, int timeout_ms, std::string* error) {
  std::string line;
  if (int rc = RecvLine(&line, timeout_ms, error)) return rc;
  if (int rc = ParseLine(line, m, error)) return rc;
  if (m->kind == "error") {
    *error = "peer: " + m->text;
    return EPROTO;
  }
  return 0;
}

int Conn::Expect(const std::string& kind, Message* m, int timeout_ms, std::string* error) {
  if (int rc = Recv(m, timeout_ms, error)) return rc;
  if (m->kind != kind) {
    *error = "expected '" + kind + "' from the peer, got '" + m->kind + "'";
    return EPROTO;
  }
  return 0;
}

// ---- Listener / Connect -----------------------------------------------------------------

Listener::~Listener() {
  if (fd_ >= 0) ::close(fd_);
}

int Listener::Listen(int port, std::string* error) {
  if (port < 0 || port > 65535) {
    *error = "bad port " + std::to_string(port);
    return EINVAL;
  }
  // IPv6 dual-stack first (accepts IPv4 too), plain IPv4 where IPv6 is missing.
  for (int family : {AF_INET6, AF_INET}) {
    int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    int one = 1, zero = 0;
    (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_storage ss{};
    socklen_t len;
    if (family == AF_INET6) {
      (void)::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
      auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
      a->sin6_family = AF_INET6;
      a->sin6_addr = in6addr_any;
      a->sin6_port = htons(static_cast<uint16_t>(port));
      len = sizeof *a;
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&ss);
      a->sin_family = AF_INET;
      a->sin_addr.s_addr = htonl(INADDR_ANY);
      a->sin_port = htons(static_cast<uint16_t>(port));
      len = sizeof *a;
    }
    if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || ::listen(fd, 1) != 0) {
      int e = errno;
      ::close(fd);
      if (family == AF_INET6 && e != EADDRINUSE) continue;
      *error = "cannot listen on TCP port " + std::to_string(port) + ": " + Errno(e);
      return e;
    }
    len = sizeof ss;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
      port_ = ntohs(family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                       : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    } else {
      port_ = port;
    }
    fd_ = fd;
    return 0;
  }
  int e = errno ? errno : EAFNOSUPPORT;
  *error = "cannot create a TCP socket: " + Errno(e);
  return e;
}

int Listener::Accept(int timeout_ms, Conn* out, std::string* error) {
  if (fd_ < 0) {
    *error = "not listening";
    return EBADF;
  }
  if (int rc = WaitFd(fd_, POLLIN, timeout_ms)) {
    *error = rc == ETIMEDOUT ? "no client connected to port " + std::to_string(port_) +
                                   " within " + std::to_string(timeout_ms / 1000) + " s"
                             : "accept failed: " + Errno(rc);
    return rc;
  }
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  int fd = ::accept4(fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    *error = "accept failed: " + Errno(e);
    return e;
  }
  int one = 1;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  char host[NI_MAXHOST] = "?";
  (void)::getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof host, nullptr, 0,
                      NI_NUMERICHOST);
  std::string h = host;
  if (h.rfind("::ffff:", 0) == 0) h = h.substr(7);  // IPv4 client on the dual-stack socket
  *out = Conn(fd);
  out->set_peer(h);
  return 0;
}

int Connect(const std::string& host, int port, int timeout_ms, Conn* out, std::string* error) {
  const std::string where = host + ":" + std::to_string(port);
  if (host.empty() || port <= 0 || port > 65535) {
    *error = "bad address '" + where + "'";
    return EINVAL;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int g = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (g != 0) {
    *error = "cannot resolve '" + host + "': " + ::gai_strerror(g);
    return EHOSTUNREACH;
  }
  int last = ECONNREFUSED;
  for (addrinfo* a = res; a; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      last = errno;
      continue;
    }
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
    if (rc == EINPROGRESS) {
      rc = WaitFd(fd, POLLOUT, timeout_ms);
      if (rc == 0) {
        int so = 0;
        socklen_t sl = sizeof so;
        rc = ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl) == 0 ? so : errno;
      }
    }
    if (rc != 0) {
      ::close(fd);
      last = rc;
      continue;
    }
    int flags = ::fcntl(fd, F_GETFL);
    (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    int one = 1;
    (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ::freeaddrinfo(res);
    *out = Conn(fd);
    out->set_peer(host);
    return 0;
  }
  ::freeaddrinfo(res);
  *error = "cannot connect to " + where + ": " + Errno(last) +
           (last == ECONNREFUSED ? " (is `qptwin bench ... --server` running there?)" : "");
  return last;
}

}  // namespace qptwin::hw::oob
