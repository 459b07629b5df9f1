// The verbs vocabulary: every enum here has the numeric values of libibverbs'
// <infiniband/verbs.h> (hw/ static_asserts this), plus name <-> value conversion.
//
// Contract:
//  1. Values are identical to libibverbs (kernel values for SMI/GSI, which libibverbs lacks).
//  2. Every enum has a name table; ToName() of a value without a name returns "?".
//  3. Parse*() accepts the name in any case, with or without its libibverbs prefix
//     (e.g. "RTR", "rtr", "IBV_QPS_RTR"), and numbers in decimal or 0x-hex.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace qptwin {

enum class QpState : uint8_t {
  kReset = 0,
  kInit = 1,
  kRtr = 2,
  kRts = 3,
  kSqd = 4,
  kSqe = 5,
  kErr = 6,
};
inline constexpr int kNumQpStates = 7;

// IB_QPT_SMI/GSI are kernel-only types (QP0/QP1); libibverbs cannot create them.
enum class QpType : uint8_t {
  kSmi = 0,
  kGsi = 1,
  kRc = 2,
  kUc = 3,
  kUd = 4,
  kRawPacket = 8,
  kXrcSend = 9,   // IB_QPT_XRC_INI in the kernel
  kXrcRecv = 10,  // IB_QPT_XRC_TGT in the kernel
};
inline constexpr int kQpTypeSlots = 11;  // indexable by the type's value

// ibv_qp_attr_mask bits. A mask is a plain uint32_t so that any value (also the
// reserved bits 21-24) can be expressed and judged, as the kernel does.
using AttrMask = uint32_t;
namespace attr {
inline constexpr AttrMask kState = 1u << 0;
inline constexpr AttrMask kCurState = 1u << 1;
inline constexpr AttrMask kEnSqdAsyncNotify = 1u << 2;
inline constexpr AttrMask kAccessFlags = 1u << 3;
inline constexpr AttrMask kPkeyIndex = 1u << 4;
inline constexpr AttrMask kPort = 1u << 5;
inline constexpr AttrMask kQkey = 1u << 6;
inline constexpr AttrMask kAv = 1u << 7;
inline constexpr AttrMask kPathMtu = 1u << 8;
inline constexpr AttrMask kTimeout = 1u << 9;
inline constexpr AttrMask kRetryCnt = 1u << 10;
inline constexpr AttrMask kRnrRetry = 1u << 11;
inline constexpr AttrMask kRqPsn = 1u << 12;
inline constexpr AttrMask kMaxQpRdAtomic = 1u << 13;
inline constexpr AttrMask kAltPath = 1u << 14;
inline constexpr AttrMask kMinRnrTimer = 1u << 15;
inline constexpr AttrMask kSqPsn = 1u << 16;
inline constexpr AttrMask kMaxDestRdAtomic = 1u << 17;
inline constexpr AttrMask kPathMigState = 1u << 18;
inline constexpr AttrMask kCap = 1u << 19;
inline constexpr AttrMask kDestQpn = 1u << 20;
inline constexpr AttrMask kRateLimit = 1u << 25;
// The "standard" mask space: bits 0..20 (IBV_QP_STATE .. IBV_QP_DEST_QPN).
inline constexpr AttrMask kStandardBits = (1u << 21) - 1;
}  // namespace attr

enum class WrOpcode : uint8_t {
  kRdmaWrite = 0,
  kRdmaWriteWithImm = 1,
  kSend = 2,
  kSendWithImm = 3,
  kRdmaRead = 4,
  kAtomicCmpAndSwp = 5,
  kAtomicFetchAndAdd = 6,
  kLocalInv = 7,
  kBindMw = 8,
  kSendWithInv = 9,
  kTso = 10,
  kDriver1 = 11,
  kAtomicWrite = 15,
};

enum class WcOpcode : uint8_t {
  kSend = 0,
  kRdmaWrite = 1,
  kRdmaRead = 2,
  kCompSwap = 3,
  kFetchAdd = 4,
  kBindMw = 5,
  kLocalInv = 6,
  kTso = 7,
  kAtomicWrite = 9,
  kRecv = 1 << 7,
  kRecvRdmaWithImm = (1 << 7) + 1,
};

enum class WcStatus : uint8_t {
  kSuccess = 0,
  kLocLenErr,
  kLocQpOpErr,
  kLocEecOpErr,
  kLocProtErr,
  kWrFlushErr,
  kMwBindErr,
  kBadRespErr,
  kLocAccessErr,
  kRemInvReqErr,
  kRemAccessErr,
  kRemOpErr,
  kRetryExcErr,
  kRnrRetryExcErr,
  kLocRddViolErr,
  kRemInvRdReqErr,
  kRemAbortErr,
  kInvEecnErr,
  kInvEecStateErr,
  kFatalErr,
  kRespTimeoutErr,
  kGeneralErr,
  kTmErr,
  kTmRndvIncomplete,
};

// ibv_wc_flags
namespace wc_flag {
inline constexpr uint32_t kGrh = 1u << 0;
inline constexpr uint32_t kWithImm = 1u << 1;
inline constexpr uint32_t kIpCsumOk = 1u << 2;
inline constexpr uint32_t kWithInv = 1u << 3;  // imm_data holds the invalidated rkey
}  // namespace wc_flag

// ibv_access_flags
using AccessFlags = uint32_t;
namespace access {
inline constexpr AccessFlags kLocalWrite = 1u << 0;
inline constexpr AccessFlags kRemoteWrite = 1u << 1;
inline constexpr AccessFlags kRemoteRead = 1u << 2;
inline constexpr AccessFlags kRemoteAtomic = 1u << 3;
inline constexpr AccessFlags kMwBind = 1u << 4;
inline constexpr AccessFlags kZeroBased = 1u << 5;
inline constexpr AccessFlags kOnDemand = 1u << 6;
inline constexpr AccessFlags kHugetlb = 1u << 7;
inline constexpr AccessFlags kRelaxedOrdering = 1u << 20;
// The flags a QP's qp_access_flags may carry (IB_ACCESS_REMOTE_* of the responder).
inline constexpr AccessFlags kQpAccessMask = kLocalWrite | kRemoteWrite | kRemoteRead | kRemoteAtomic;
// LOCAL_WRITE and every remote access: what tests, benchmarks and examples register and
// grant when access is not what they are about.
inline constexpr AccessFlags kAll = kLocalWrite | kRemoteWrite | kRemoteRead | kRemoteAtomic;
inline constexpr AccessFlags kKnownMask =
    kLocalWrite | kRemoteWrite | kRemoteRead | kRemoteAtomic | kMwBind | kZeroBased | kOnDemand |
    kHugetlb | kRelaxedOrdering;
}  // namespace access

// ibv_send_flags
using SendFlags = uint32_t;
namespace send_flag {
inline constexpr SendFlags kFence = 1u << 0;
inline constexpr SendFlags kSignaled = 1u << 1;
inline constexpr SendFlags kSolicited = 1u << 2;
inline constexpr SendFlags kInline = 1u << 3;
inline constexpr SendFlags kIpCsum = 1u << 4;
inline constexpr SendFlags kKnownMask = kFence | kSignaled | kSolicited | kInline | kIpCsum;
}  // namespace send_flag

enum class EventType : uint8_t {
  kCqErr = 0,
  kQpFatal,
  kQpReqErr,
  kQpAccessErr,
  kCommEst,
  kSqDrained,
  kPathMig,
  kPathMigErr,
  kDeviceFatal,
  kPortActive,
  kPortErr,
  kLidChange,
  kPkeyChange,
  kSmChange,
  kSrqErr,
  kSrqLimitReached,
  kQpLastWqeReached,
  kClientReregister,
  kGidChange,
  kWqFatal,
};

enum class Mtu : uint8_t { k256 = 1, k512 = 2, k1024 = 3, k2048 = 4, k4096 = 5 };
constexpr uint32_t MtuBytes(Mtu m) { return 128u << static_cast<uint8_t>(m); }
constexpr bool IsValidMtu(uint32_t v) { return v >= 1 && v <= 5; }

enum class PortState : uint8_t { kNop = 0, kDown = 1, kInit = 2, kArmed = 3, kActive = 4 };
enum class LinkLayer : uint8_t { kUnspecified = 0, kInfiniBand = 1, kEthernet = 2 };
enum class AtomicCap : uint8_t { kNone = 0, kHca = 1, kGlob = 2 };
// ibv_mw_type: a type 1 window is bound by ibv_bind_mw and stays valid until rebound or
// deallocated; a type 2 window is bound by an IBV_WR_BIND_MW work request and invalidated by
// LOCAL_INV / SEND_WITH_INV (IBTA 10.6.7).
enum class MwType : uint8_t { kType1 = 1, kType2 = 2 };

// ---- Names -------------------------------------------------------------------------------

template <typename E>
struct NamedValue {
  E value;
  std::string_view name;
};

std::string_view ToName(QpState v);
std::string_view ToName(QpType v);
std::string_view ToName(WrOpcode v);
std::string_view ToName(WcOpcode v);
std::string_view ToName(WcStatus v);
std::string_view ToName(EventType v);
std::string_view ToName(Mtu v);
std::string_view ToName(PortState v);
std::string_view ToName(LinkLayer v);
std::string_view ToName(MwType v);

std::optional<QpState> ParseQpState(std::string_view s);
std::optional<QpType> ParseQpType(std::string_view s);
std::optional<WrOpcode> ParseWrOpcode(std::string_view s);
std::optional<WcStatus> ParseWcStatus(std::string_view s);
std::optional<EventType> ParseEventType(std::string_view s);
// "1", "2", "TYPE_1", "IBV_MW_TYPE_2".
std::optional<MwType> ParseMwType(std::string_view s);
// Accepts "1024" (bytes) or "IBV_MTU_1024" or the enum value "3".
std::optional<Mtu> ParseMtu(std::string_view s);

// All canonical names, in value order, for "valid choices" messages.
std::string QpStateChoices();
std::string QpTypeChoices();
std::string AttrChoices();

// Attribute-mask bits: "PATH_MTU" <-> attr::kPathMtu.
std::string_view AttrBitName(AttrMask single_bit);  // "?" for an unnamed bit
std::optional<AttrMask> ParseAttrBit(std::string_view s);
// "STATE|AV|PATH_MTU" (names joined by '|' or ',') or a number ("0x1a1", "417").
std::optional<AttrMask> ParseAttrMask(std::string_view s);
// "STATE|AV|PATH_MTU"; unnamed bits print as "BIT21"; 0 prints as "0".
std::string FormatAttrMask(AttrMask mask);

// Flag sets: "LOCAL_WRITE|REMOTE_READ" <-> bits; "0" for none.
std::optional<AccessFlags> ParseAccessFlags(std::string_view s);
std::string FormatAccessFlags(AccessFlags flags);
std::optional<SendFlags> ParseSendFlags(std::string_view s);
std::string FormatSendFlags(SendFlags flags);
// ibv_wc_flags: "GRH|WITH_IMM"; "0" for none.
std::string FormatWcFlags(uint32_t flags);

// errno names used across backends: "EINVAL" <-> EINVAL. 0 is "ok".
std::string_view ErrnoName(int err);
std::optional<int> ParseErrno(std::string_view s);

// Case-insensitive equality, shared by the parsers and the CLI.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);
std::optional<uint64_t> ParseUnsigned(std::string_view s);

}  // namespace qptwin
