#include "hw/oob.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

namespace qptwin::hw::oob {
namespace {

QpMessage SampleQp() {
  QpMessage q;
  q.qp_num = 0x11;
  q.psn = 0xabcdef;
  for (size_t i = 0; i < 16; ++i) q.gid[i] = static_cast<uint8_t>(i * 17);
  q.gid_index = 1;
  q.lid = 0;
  q.link_layer = 2;
  q.mtu = 1024;
  q.addr = 0x7f00deadbeef0000;
  q.rkey = 0xfedcba98;
  q.len = 135168;
  return q;
}

Params SampleParams() {
  Params p;
  p.test = "write_bw";
  p.size = 4096;
  p.iters = 2000;
  p.qps = 2;
  p.tx_depth = 128;
  p.conn = "RC";
  return p;
}

void ExpectSameQp(const QpMessage& a, const QpMessage& b) {
  EXPECT_EQ(a.qp_num, b.qp_num);
  EXPECT_EQ(a.psn, b.psn);
  EXPECT_EQ(a.gid, b.gid);
  EXPECT_EQ(a.gid_index, b.gid_index);
  EXPECT_EQ(a.lid, b.lid);
  EXPECT_EQ(a.link_layer, b.link_layer);
  EXPECT_EQ(a.mtu, b.mtu);
  EXPECT_EQ(a.addr, b.addr);
  EXPECT_EQ(a.rkey, b.rkey);
  EXPECT_EQ(a.len, b.len);
}

TEST(Oob, EncodeDecodeRoundTrip) {
  std::string error;
  Message m;
  ASSERT_EQ(ParseLine(EncodeQp(SampleQp()), &m, &error), 0) << error;
  QpMessage q;
  ASSERT_EQ(DecodeQp(m, &q, &error), 0) << error;
  ExpectSameQp(q, SampleQp());
  ASSERT_EQ(ParseLine(EncodeParams(SampleParams()), &m, &error), 0) << error;
  Params p;
  ASSERT_EQ(DecodeParams(m, &p, &error), 0) << error;
  EXPECT_EQ(FirstDifference(p, SampleParams()), "");
  ASSERT_EQ(ParseLine(EncodeError("bad things"), &m, &error), 0);
  EXPECT_EQ(m.kind, "error");
  EXPECT_EQ(m.text, "bad things");
}

TEST(Oob, DifferenceNamesTheFlag) {
  Params a = SampleParams(), b = SampleParams();
  b.size = 65536;
  EXPECT_EQ(FirstDifference(a, b), "-s (size): server 4096, client 65536");
  b = SampleParams();
  b.conn = "UC";
  EXPECT_NE(FirstDifference(a, b).find("-c (connection type)"), std::string::npos);
  b = SampleParams();
  b.test = "read_bw";
  EXPECT_NE(FirstDifference(a, b).find("TEST: server write_bw, client read_bw"), std::string::npos);
}

TEST(Oob, BadLinesGiveClearErrors) {
  std::string error;
  Message m;
  EXPECT_EQ(ParseLine("GET / HTTP/1.1", &m, &error), EPROTO);
  EXPECT_NE(error.find("not a qptwin bench peer"), std::string::npos) << error;
  EXPECT_EQ(ParseLine("qptwin-bench-oob 9 qp qpn=1", &m, &error), EPROTO);
  EXPECT_NE(error.find("version 9"), std::string::npos) << error;
  EXPECT_EQ(ParseLine("qptwin-bench-oob 1 qp novalue", &m, &error), EPROTO);
  ASSERT_EQ(ParseLine("qptwin-bench-oob 1 qp qpn=1 psn=2", &m, &error), 0);
  QpMessage q;
  EXPECT_EQ(DecodeQp(m, &q, &error), EPROTO);
  EXPECT_NE(error.find("lacks field"), std::string::npos) << error;
  std::string line = EncodeQp(SampleQp());
  line.replace(line.find("gid=") + 4, 2, "zz");
  ASSERT_EQ(ParseLine(line, &m, &error), 0);
  EXPECT_EQ(DecodeQp(m, &q, &error), EPROTO);
  EXPECT_NE(error.find("bad gid"), std::string::npos) << error;
  line = EncodeQp(SampleQp());
  line.replace(line.find("qpn=17"), 6, "qpn=99999999");
  ASSERT_EQ(ParseLine(line, &m, &error), 0);
  EXPECT_EQ(DecodeQp(m, &q, &error), EPROTO);
  EXPECT_NE(error.find("bad qpn"), std::string::npos) << error;
  Params p;
  EXPECT_EQ(DecodeParams(m, &p, &error), EPROTO);  // a qp message is not params
}

TEST(Oob, RoundTripOverTcpInTwoThreads) {
  Listener l;
  std::string error;
  ASSERT_EQ(l.Listen(0, &error), 0) << error;
  ASSERT_GT(l.port(), 0);
  std::string server_error;
  QpMessage server_got;
  Params server_params;
  int server_rc = -1;
  std::thread server([&] {
    Conn c;
    Message m;
    server_rc = l.Accept(10000, &c, &server_error);
    if (server_rc == 0) server_rc = c.Expect("params", &m, 10000, &server_error);
    if (server_rc == 0) server_rc = DecodeParams(m, &server_params, &server_error);
    if (server_rc == 0) server_rc = c.Expect("qp", &m, 10000, &server_error);
    if (server_rc == 0) server_rc = DecodeQp(m, &server_got, &server_error);
    QpMessage mine = SampleQp();
    mine.qp_num = 0x22;
    if (server_rc == 0) server_rc = c.Send(EncodeQp(mine), &server_error);
    if (server_rc == 0) server_rc = c.Expect("done", &m, 10000, &server_error);
    if (server_rc == 0) server_rc = c.Send(EncodeControl("done"), &server_error);
  });
  Conn c;
  ASSERT_EQ(Connect("127.0.0.1", l.port(), 10000, &c, &error), 0) << error;
  ASSERT_EQ(c.Send(EncodeParams(SampleParams()), &error), 0) << error;
  ASSERT_EQ(c.Send(EncodeQp(SampleQp()), &error), 0) << error;
  Message m;
  ASSERT_EQ(c.Expect("qp", &m, 10000, &error), 0) << error;
  QpMessage got;
  ASSERT_EQ(DecodeQp(m, &got, &error), 0) << error;
  EXPECT_EQ(got.qp_num, 0x22u);
  EXPECT_EQ(c.Recv(&m, 0, &error), ETIMEDOUT) << "nothing more is pending";
  ASSERT_EQ(c.Send(EncodeControl("done", {{"size", "8"}}), &error), 0);
  ASSERT_EQ(c.Expect("done", &m, 10000, &error), 0) << error;
  server.join();
  ASSERT_EQ(server_rc, 0) << server_error;
  ExpectSameQp(server_got, SampleQp());
  EXPECT_EQ(FirstDifference(server_params, SampleParams()), "");
  // The server is gone: the next read sees the close.
  EXPECT_EQ(c.Recv(&m, 10000, &error), ECONNRESET);
  EXPECT_NE(error.find("closed"), std::string::npos) << error;
}

TEST(Oob, GarbageFromThePeerIsAClearErrorNotACrash) {
  Listener l;
  std::string error;
  ASSERT_EQ(l.Listen(0, &error), 0) << error;
  std::thread peer([&] {
    Conn c;
    std::string e;
    if (Connect("127.0.0.1", l.port(), 10000, &c, &e) != 0) return;
    (void)c.Send("SSH-2.0-OpenSSH_9.2", &e);  // a line of someone else's protocol
    std::string junk(5000, '\x01');             // and a flood without a newline
    (void)c.Send(junk, &e);
  });
  Conn c;
  ASSERT_EQ(l.Accept(10000, &c, &error), 0) << error;
  Message m;
  EXPECT_EQ(c.Recv(&m, 10000, &error), EPROTO);
  EXPECT_NE(error.find("not a qptwin bench peer"), std::string::npos) << error;
  EXPECT_EQ(c.Recv(&m, 10000, &error), EPROTO);
  EXPECT_FALSE(error.empty());
  peer.join();
}

TEST(Oob, PeerErrorMessageIsReported) {
  Listener l;
  std::string error;
  ASSERT_EQ(l.Listen(0, &error), 0) << error;
  std::thread peer([&] {
    Conn c;
    std::string e;
    if (Connect("127.0.0.1", l.port(), 10000, &c, &e) != 0) return;
    (void)c.Send(EncodeError("options differ: -s (size): server 8, client 16"), &e);
  });
  Conn c;
  ASSERT_EQ(l.Accept(10000, &c, &error), 0) << error;
  Message m;
  EXPECT_EQ(c.Expect("go", &m, 10000, &error), EPROTO);
  EXPECT_EQ(error, "peer: options differ: -s (size): server 8, client 16");
  peer.join();
}

TEST(Oob, ConnectionRefusedIsAClearError) {
  // A port that was free a moment ago: listen on 0, note the port, close.
  int port = 0;
  {
    Listener l;
    std::string e;
    ASSERT_EQ(l.Listen(0, &e), 0) << e;
    port = l.port();
  }
  Conn c;
  std::string error;
  EXPECT_EQ(Connect("127.0.0.1", port, 5000, &c, &error), ECONNREFUSED);
  EXPECT_NE(error.find("cannot connect to 127.0.0.1:" + std::to_string(port)), std::string::npos)
      << error;
  EXPECT_NE(error.find("refused"), std::string::npos) << error;
  EXPECT_FALSE(c.open());
  EXPECT_NE(Connect("no-such-host.invalid", 1, 2000, &c, &error), 0);
  EXPECT_NE(error.find("no-such-host.invalid"), std::string::npos) << error;
}

TEST(Oob, AcceptTimesOut) {
  Listener l;
  std::string error;
  ASSERT_EQ(l.Listen(0, &error), 0) << error;
  Conn c;
  EXPECT_EQ(l.Accept(50, &c, &error), ETIMEDOUT);
  EXPECT_NE(error.find("no client"), std::string::npos) << error;
}

}  // namespace
}  // namespace qptwin::hw::oob
