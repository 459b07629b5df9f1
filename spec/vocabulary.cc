#include "spec/vocabulary.h"

#include <cerrno>
#include <cstdlib>

namespace qptwin {
namespace {

constexpr std::array<NamedValue<QpState>, 7> kQpStateNames{{
    {QpState::kReset, "RESET"},
    {QpState::kInit, "INIT"},
    {QpState::kRtr, "RTR"},
    {QpState::kRts, "RTS"},
    {QpState::kSqd, "SQD"},
    {QpState::kSqe, "SQE"},
    {QpState::kErr, "ERR"},
}};
static_assert(kQpStateNames.size() == kNumQpStates);

// Canonical names first; the kernel's XRC names are accepted as aliases.
constexpr std::array<NamedValue<QpType>, 10> kQpTypeNames{{
    {QpType::kRc, "RC"},
    {QpType::kUc, "UC"},
    {QpType::kUd, "UD"},
    {QpType::kRawPacket, "RAW_PACKET"},
    {QpType::kXrcSend, "XRC_SEND"},
    {QpType::kXrcRecv, "XRC_RECV"},
    {QpType::kSmi, "SMI"},
    {QpType::kGsi, "GSI"},
    {QpType::kXrcSend, "XRC_INI"},
    {QpType::kXrcRecv, "XRC_TGT"},
}};
constexpr size_t kCanonicalQpTypes = 8;

constexpr std::array<NamedValue<AttrMask>, 22> kAttrNames{{
    {attr::kState, "STATE"},
    {attr::kCurState, "CUR_STATE"},
    {attr::kEnSqdAsyncNotify, "EN_SQD_ASYNC_NOTIFY"},
    {attr::kAccessFlags, "ACCESS_FLAGS"},
    {attr::kPkeyIndex, "PKEY_INDEX"},
    {attr::kPort, "PORT"},
    {attr::kQkey, "QKEY"},
    {attr::kAv, "AV"},
    {attr::kPathMtu, "PATH_MTU"},
    {attr::kTimeout, "TIMEOUT"},
    {attr::kRetryCnt, "RETRY_CNT"},
    {attr::kRnrRetry, "RNR_RETRY"},
    {attr::kRqPsn, "RQ_PSN"},
    {attr::kMaxQpRdAtomic, "MAX_QP_RD_ATOMIC"},
    {attr::kAltPath, "ALT_PATH"},
    {attr::kMinRnrTimer, "MIN_RNR_TIMER"},
    {attr::kSqPsn, "SQ_PSN"},
    {attr::kMaxDestRdAtomic, "MAX_DEST_RD_ATOMIC"},
    {attr::kPathMigState, "PATH_MIG_STATE"},
    {attr::kCap, "CAP"},
    {attr::kDestQpn, "DEST_QPN"},
    {attr::kRateLimit, "RATE_LIMIT"},
}};

constexpr std::array<NamedValue<WrOpcode>, 13> kWrOpcodeNames{{
    {WrOpcode::kRdmaWrite, "RDMA_WRITE"},
    {WrOpcode::kRdmaWriteWithImm, "RDMA_WRITE_WITH_IMM"},
    {WrOpcode::kSend, "SEND"},
    {WrOpcode::kSendWithImm, "SEND_WITH_IMM"},
    {WrOpcode::kRdmaRead, "RDMA_READ"},
    {WrOpcode::kAtomicCmpAndSwp, "ATOMIC_CMP_AND_SWP"},
    {WrOpcode::kAtomicFetchAndAdd, "ATOMIC_FETCH_AND_ADD"},
    {WrOpcode::kLocalInv, "LOCAL_INV"},
    {WrOpcode::kBindMw, "BIND_MW"},
    {WrOpcode::kSendWithInv, "SEND_WITH_INV"},
    {WrOpcode::kTso, "TSO"},
    {WrOpcode::kDriver1, "DRIVER1"},
    {WrOpcode::kAtomicWrite, "ATOMIC_WRITE"},
}};

constexpr std::array<NamedValue<WcOpcode>, 11> kWcOpcodeNames{{
    {WcOpcode::kSend, "SEND"},
    {WcOpcode::kRdmaWrite, "RDMA_WRITE"},
    {WcOpcode::kRdmaRead, "RDMA_READ"},
    {WcOpcode::kCompSwap, "COMP_SWAP"},
    {WcOpcode::kFetchAdd, "FETCH_ADD"},
    {WcOpcode::kBindMw, "BIND_MW"},
    {WcOpcode::kLocalInv, "LOCAL_INV"},
    {WcOpcode::kTso, "TSO"},
    {WcOpcode::kAtomicWrite, "ATOMIC_WRITE"},
    {WcOpcode::kRecv, "RECV"},
    {WcOpcode::kRecvRdmaWithImm, "RECV_RDMA_WITH_IMM"},
}};

constexpr std::array<NamedValue<WcStatus>, 24> kWcStatusNames{{
    {WcStatus::kSuccess, "SUCCESS"},
    {WcStatus::kLocLenErr, "LOC_LEN_ERR"},
    {WcStatus::kLocQpOpErr, "LOC_QP_OP_ERR"},
    {WcStatus::kLocEecOpErr, "LOC_EEC_OP_ERR"},
    {WcStatus::kLocProtErr, "LOC_PROT_ERR"},
    {WcStatus::kWrFlushErr, "WR_FLUSH_ERR"},
    {WcStatus::kMwBindErr, "MW_BIND_ERR"},
    {WcStatus::kBadRespErr, "BAD_RESP_ERR"},
    {WcStatus::kLocAccessErr, "LOC_ACCESS_ERR"},
    {WcStatus::kRemInvReqErr, "REM_INV_REQ_ERR"},
    {WcStatus::kRemAccessErr, "REM_ACCESS_ERR"},
    {WcStatus::kRemOpErr, "REM_OP_ERR"},
    {WcStatus::kRetryExcErr, "RETRY_EXC_ERR"},
    {WcStatus::kRnrRetryExcErr, "RNR_RETRY_EXC_ERR"},
    {WcStatus::kLocRddViolErr, "LOC_RDD_VIOL_ERR"},
    {WcStatus::kRemInvRdReqErr, "REM_INV_RD_REQ_ERR"},
    {WcStatus::kRemAbortErr, "REM_ABORT_ERR"},
    {WcStatus::kInvEecnErr, "INV_EECN_ERR"},
    {WcStatus::kInvEecStateErr, "INV_EEC_STATE_ERR"},
    {WcStatus::kFatalErr, "FATAL_ERR"},
    {WcStatus::kRespTimeoutErr, "RESP_TIMEOUT_ERR"},
    {WcStatus::kGeneralErr, "GENERAL_ERR"},
    {WcStatus::kTmErr, "TM_ERR"},
    {WcStatus::kTmRndvIncomplete, "TM_RNDV_INCOMPLETE"},
}};
static_assert(static_cast<int>(WcStatus::kTmRndvIncomplete) + 1 == kWcStatusNames.size());

constexpr std::array<NamedValue<EventType>, 20> kEventNames{{
    {EventType::kCqErr, "CQ_ERR"},
    {EventType::kQpFatal, "QP_FATAL"},
    {EventType::kQpReqErr, "QP_REQ_ERR"},
    {EventType::kQpAccessErr, "QP_ACCESS_ERR"},
    {EventType::kCommEst, "COMM_EST"},
    {EventType::kSqDrained, "SQ_DRAINED"},
    {EventType::kPathMig, "PATH_MIG"},
    {EventType::kPathMigErr, "PATH_MIG_ERR"},
    {EventType::kDeviceFatal, "DEVICE_FATAL"},
    {EventType::kPortActive, "PORT_ACTIVE"},
    {EventType::kPortErr, "PORT_ERR"},
    {EventType::kLidChange, "LID_CHANGE"},
    {EventType::kPkeyChange, "PKEY_CHANGE"},
    {EventType::kSmChange, "SM_CHANGE"},
    {EventType::kSrqErr, "SRQ_ERR"},
    {EventType::kSrqLimitReached, "SRQ_LIMIT_REACHED"},
    {EventType::kQpLastWqeReached, "QP_LAST_WQE_REACHED"},
    {EventType::kClientReregister, "CLIENT_REREGISTER"},
    {EventType::kGidChange, "GID_CHANGE"},
    {EventType::kWqFatal, "WQ_FATAL"},
}};
static_assert(static_cast<int>(EventType::kWqFatal) + 1 == kEventNames.size());

constexpr std::array<NamedValue<Mtu>, 5> kMtuNames{{
    {Mtu::k256, "256"},
    {Mtu::k512, "512"},
    {Mtu::k1024, "1024"},
    {Mtu::k2048, "2048"},
    {Mtu::k4096, "4096"},
}};

constexpr std::array<NamedValue<PortState>, 5> kPortStateNames{{
    {PortState::kNop, "NOP"},
    {PortState::kDown, "DOWN"},
    {PortState::kInit, "INIT"},
    {PortState::kArmed, "ARMED"},
    {PortState::kActive, "ACTIVE"},
}};

constexpr std::array<NamedValue<LinkLayer>, 3> kLinkLayerNames{{
    {LinkLayer::kUnspecified, "UNSPECIFIED"},
    {LinkLayer::kInfiniBand, "INFINIBAND"},
    {LinkLayer::kEthernet, "ETHERNET"},
}};

constexpr std::array<NamedValue<MwType>, 2> kMwTypeNames{{
    {MwType::kType1, "TYPE_1"},
    {MwType::kType2, "TYPE_2"},
}};

constexpr std::array<NamedValue<AccessFlags>, 9> kAccessNames{{
    {access::kLocalWrite, "LOCAL_WRITE"},
    {access::kRemoteWrite, "REMOTE_WRITE"},
    {access::kRemoteRead, "REMOTE_READ"},
    {access::kRemoteAtomic, "REMOTE_ATOMIC"},
    {access::kMwBind, "MW_BIND"},
    {access::kZeroBased, "ZERO_BASED"},
    {access::kOnDemand, "ON_DEMAND"},
    {access::kHugetlb, "HUGETLB"},
    {access::kRelaxedOrdering, "RELAXED_ORDERING"},
}};

constexpr std::array<NamedValue<SendFlags>, 5> kSendFlagNames{{
    {send_flag::kFence, "FENCE"},
    {send_flag::kSignaled, "SIGNALED"},
    {send_flag::kSolicited, "SOLICITED"},
    {send_flag::kInline, "INLINE"},
    {send_flag::kIpCsum, "IP_CSUM"},
}};

constexpr std::array<NamedValue<uint32_t>, 4> kWcFlagNames{{
    {wc_flag::kGrh, "GRH"},
    {wc_flag::kWithImm, "WITH_IMM"},
    {wc_flag::kIpCsumOk, "IP_CSUM_OK"},
    {wc_flag::kWithInv, "WITH_INV"},
}};

constexpr std::array<NamedValue<int>, 16> kErrnoNames{{
    {0, "ok"},
    {EPERM, "EPERM"},
    {ENOENT, "ENOENT"},
    {EIO, "EIO"},
    {EAGAIN, "EAGAIN"},
    {ENOMEM, "ENOMEM"},
    {EACCES, "EACCES"},
    {EFAULT, "EFAULT"},
    {EBUSY, "EBUSY"},
    {ENODEV, "ENODEV"},
    {EINVAL, "EINVAL"},
    {ENOSPC, "ENOSPC"},
    {ERANGE, "ERANGE"},
    {ENOSYS, "ENOSYS"},
    {EOPNOTSUPP, "EOPNOTSUPP"},
    {ETIMEDOUT, "ETIMEDOUT"},
}};

char Upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }

// Strips one of the prefixes (case-insensitively) if present.
std::string_view StripPrefix(std::string_view s, std::string_view prefix) {
  if (s.size() > prefix.size() && EqualsIgnoreCase(s.substr(0, prefix.size()), prefix)) {
    return s.substr(prefix.size());
  }
  return s;
}

template <typename E, size_t N>
std::string_view NameIn(const std::array<NamedValue<E>, N>& table, E v) {
  for (const auto& nv : table) {
    if (nv.value == v) return nv.name;
  }
  return "?";
}

template <typename E, size_t N>
std::optional<E> ParseIn(const std::array<NamedValue<E>, N>& table, std::string_view s,
                         std::string_view prefix) {
  s = StripPrefix(s, prefix);
  for (const auto& nv : table) {
    if (EqualsIgnoreCase(nv.name, s)) return nv.value;
  }
  if (auto n = ParseUnsigned(s)) {
    for (const auto& nv : table) {
      if (static_cast<uint64_t>(nv.value) == *n) return nv.value;
    }
  }
  return std::nullopt;
}

template <typename E, size_t N>
std::string Choices(const std::array<NamedValue<E>, N>& table, size_t count = N) {
  std::string out;
  for (size_t i = 0; i < count; ++i) {
    if (i) out += ", ";
    out += table[i].name;
  }
  return out;
}

template <size_t N>
std::optional<uint32_t> ParseFlagSet(const std::array<NamedValue<uint32_t>, N>& table,
                                     std::string_view s, std::string_view prefix) {
  if (s.empty()) return std::nullopt;
  if (auto n = ParseUnsigned(s)) {
    if (*n > 0xffffffffu) return std::nullopt;
    return static_cast<uint32_t>(*n);
  }
  uint32_t out = 0;
  while (!s.empty()) {
    // find_first_of("|,") without a memchr call per character
    size_t cut = 0;
    while (cut < s.size() && s[cut] != '|' && s[cut] != ',') ++cut;
    if (cut == s.size()) cut = std::string_view::npos;
    std::string_view part = s.substr(0, cut);
    s = (cut == std::string_view::npos) ? std::string_view() : s.substr(cut + 1);
    if (cut != std::string_view::npos && s.empty()) return std::nullopt;  // trailing separator
    auto bit = ParseIn(table, part, prefix);
    if (!bit || ParseUnsigned(StripPrefix(part, prefix))) return std::nullopt;
    out |= *bit;
  }
  return out;
}

template <size_t N>
std::string FormatFlagSet(const std::array<NamedValue<uint32_t>, N>& table, uint32_t flags,
                          std::string_view unnamed_prefix) {
  if (flags == 0) return "0";
  std::string out;
  for (int b = 0; b < 32; ++b) {
    uint32_t bit = 1u << b;
    if (!(flags & bit)) continue;
    if (!out.empty()) out += '|';
    std::string_view name = NameIn(table, bit);
    if (name == "?") {
      out += unnamed_prefix;
      out += std::to_string(b);
    } else {
      out += name;
    }
  }
  return out;
}

}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    // Names are mostly written as the table spells them: equal bytes need no case folding.
    if (a[i] != b[i] && Upper(a[i]) != Upper(b[i])) return false;
  }
  return true;
}

std::optional<uint64_t> ParseUnsigned(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  uint64_t v = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (base == 16 && Upper(c) >= 'A' && Upper(c) <= 'F') {
      d = Upper(c) - 'A' + 10;
    } else {
      return std::nullopt;
    }
    if (v > (UINT64_MAX - d) / base) return std::nullopt;  // overflow
    v = v * base + d;
  }
  return v;
}

std::string_view ToName(QpState v) { return NameIn(kQpStateNames, v); }
std::string_view ToName(QpType v) { return NameIn(kQpTypeNames, v); }
std::string_view ToName(WrOpcode v) { return NameIn(kWrOpcodeNames, v); }
std::string_view ToName(WcOpcode v) { return NameIn(kWcOpcodeNames, v); }
std::string_view ToName(WcStatus v) { return NameIn(kWcStatusNames, v); }
std::string_view ToName(EventType v) { return NameIn(kEventNames, v); }
std::string_view ToName(Mtu v) { return NameIn(kMtuNames, v); }
std::string_view ToName(PortState v) { return NameIn(kPortStateNames, v); }
std::string_view ToName(LinkLayer v) { return NameIn(kLinkLayerNames, v); }
std::string_view ToName(MwType v) { return NameIn(kMwTypeNames, v); }

std::optional<QpState> ParseQpState(std::string_view s) {
  if (EqualsIgnoreCase(s, "ERROR") || EqualsIgnoreCase(s, "IBV_QPS_ERROR")) return QpState::kErr;
  return ParseIn(kQpStateNames, s, "IBV_QPS_");
}
std::optional<QpType> ParseQpType(std::string_view s) {
  return ParseIn(kQpTypeNames, StripPrefix(s, "IB_QPT_"), "IBV_QPT_");
}
std::optional<MwType> ParseMwType(std::string_view s) {
  return ParseIn(kMwTypeNames, s, "IBV_MW_");
}
std::optional<WrOpcode> ParseWrOpcode(std::string_view s) {
  return ParseIn(kWrOpcodeNames, s, "IBV_WR_");
}
std::optional<WcStatus> ParseWcStatus(std::string_view s) {
  return ParseIn(kWcStatusNames, s, "IBV_WC_");
}
std::optional<EventType> ParseEventType(std::string_view s) {
  return ParseIn(kEventNames, s, "IBV_EVENT_");
}
std::optional<Mtu> ParseMtu(std::string_view s) {
  s = StripPrefix(s, "IBV_MTU_");
  for (const auto& nv : kMtuNames) {
    if (nv.name == s) return nv.value;
  }
  if (auto n = ParseUnsigned(s); n && IsValidMtu(static_cast<uint32_t>(*n)) && *n <= 5) {
    return static_cast<Mtu>(*n);
  }
  return std::nullopt;
}

std::string QpStateChoices() { return Choices(kQpStateNames); }
std::string QpTypeChoices() { return Choices(kQpTypeNames, kCanonicalQpTypes); }
std::string AttrChoices() { return Choices(kAttrNames); }

std::string_view AttrBitName(AttrMask bit) { return NameIn(kAttrNames, bit); }
std::optional<AttrMask> ParseAttrBit(std::string_view s) {
  auto v = ParseIn(kAttrNames, s, "IBV_QP_");
  if (!v || ParseUnsigned(StripPrefix(s, "IBV_QP_"))) return std::nullopt;
  return v;
}
std::optional<AttrMask> ParseAttrMask(std::string_view s) {
  return ParseFlagSet(kAttrNames, s, "IBV_QP_");
}
std::string FormatAttrMask(AttrMask mask) { return FormatFlagSet(kAttrNames, mask, "BIT"); }

std::optional<AccessFlags> ParseAccessFlags(std::string_view s) {
  return ParseFlagSet(kAccessNames, s, "IBV_ACCESS_");
}
std::string FormatAccessFlags(AccessFlags flags) {
  return FormatFlagSet(kAccessNames, flags, "BIT");
}
std::optional<SendFlags> ParseSendFlags(std::string_view s) {
  return ParseFlagSet(kSendFlagNames, s, "IBV_SEND_");
}
std::string FormatSendFlags(SendFlags flags) {
  return FormatFlagSet(kSendFlagNames, flags, "BIT");
}

std::string FormatWcFlags(uint32_t flags) { return FormatFlagSet(kWcFlagNames, flags, "BIT"); }

std::string_view ErrnoName(int err) { return NameIn(kErrnoNames, err); }
std::optional<int> ParseErrno(std::string_view s) {
  for (const auto& nv : kErrnoNames) {
    if (EqualsIgnoreCase(nv.name, s)) return nv.value;
  }
  return std::nullopt;
}

}  // namespace qptwin
