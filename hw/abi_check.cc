// Compile-time proof that spec/vocabulary.h uses libibverbs' numeric values, so hw/ can
// convert enums and flag sets with static_cast. A failure here is a build error: fix the
// vocabulary (spec/), never the cast. The enum counts are pinned too, so a new enumerator on
// either side is noticed.
#include <infiniband/verbs.h>

#include "spec/backend.h"
#include "spec/vocabulary.h"

namespace qptwin::hw {
namespace {

// QpState (ibv_qp_state)
static_assert(static_cast<int>(QpState::kReset) == IBV_QPS_RESET);
static_assert(static_cast<int>(QpState::kInit) == IBV_QPS_INIT);
static_assert(static_cast<int>(QpState::kRtr) == IBV_QPS_RTR);
static_assert(static_cast<int>(QpState::kRts) == IBV_QPS_RTS);
static_assert(static_cast<int>(QpState::kSqd) == IBV_QPS_SQD);
static_assert(static_cast<int>(QpState::kSqe) == IBV_QPS_SQE);
static_assert(static_cast<int>(QpState::kErr) == IBV_QPS_ERR);

// QpType (ibv_qp_type; SMI/GSI are kernel-only)
static_assert(static_cast<int>(QpType::kRc) == IBV_QPT_RC);
static_assert(static_cast<int>(QpType::kUc) == IBV_QPT_UC);
static_assert(static_cast<int>(QpType::kUd) == IBV_QPT_UD);
static_assert(static_cast<int>(QpType::kRawPacket) == IBV_QPT_RAW_PACKET);
static_assert(static_cast<int>(QpType::kXrcSend) == IBV_QPT_XRC_SEND);
static_assert(static_cast<int>(QpType::kXrcRecv) == IBV_QPT_XRC_RECV);

// attr:: (ibv_qp_attr_mask)
static_assert(attr::kState == IBV_QP_STATE);
static_assert(attr::kCurState == IBV_QP_CUR_STATE);
static_assert(attr::kEnSqdAsyncNotify == IBV_QP_EN_SQD_ASYNC_NOTIFY);
static_assert(attr::kAccessFlags == IBV_QP_ACCESS_FLAGS);
static_assert(attr::kPkeyIndex == IBV_QP_PKEY_INDEX);
static_assert(attr::kPort == IBV_QP_PORT);
static_assert(attr::kQkey == IBV_QP_QKEY);
static_assert(attr::kAv == IBV_QP_AV);
static_assert(attr::kPathMtu == IBV_QP_PATH_MTU);
static_assert(attr::kTimeout == IBV_QP_TIMEOUT);
static_assert(attr::kRetryCnt == IBV_QP_RETRY_CNT);
static_assert(attr::kRnrRetry == IBV_QP_RNR_RETRY);
static_assert(attr::kRqPsn == IBV_QP_RQ_PSN);
static_assert(attr::kMaxQpRdAtomic == IBV_QP_MAX_QP_RD_ATOMIC);
static_assert(attr::kAltPath == IBV_QP_ALT_PATH);
static_assert(attr::kMinRnrTimer == IBV_QP_MIN_RNR_TIMER);
static_assert(attr::kSqPsn == IBV_QP_SQ_PSN);
static_assert(attr::kMaxDestRdAtomic == IBV_QP_MAX_DEST_RD_ATOMIC);
static_assert(attr::kPathMigState == IBV_QP_PATH_MIG_STATE);
static_assert(attr::kCap == IBV_QP_CAP);
static_assert(attr::kDestQpn == IBV_QP_DEST_QPN);
static_assert(attr::kRateLimit == IBV_QP_RATE_LIMIT);

// WrOpcode (ibv_wr_opcode)
static_assert(static_cast<int>(WrOpcode::kRdmaWrite) == IBV_WR_RDMA_WRITE);
static_assert(static_cast<int>(WrOpcode::kRdmaWriteWithImm) == IBV_WR_RDMA_WRITE_WITH_IMM);
static_assert(static_cast<int>(WrOpcode::kSend) == IBV_WR_SEND);
static_assert(static_cast<int>(WrOpcode::kSendWithImm) == IBV_WR_SEND_WITH_IMM);
static_assert(static_cast<int>(WrOpcode::kRdmaRead) == IBV_WR_RDMA_READ);
static_assert(static_cast<int>(WrOpcode::kAtomicCmpAndSwp) == IBV_WR_ATOMIC_CMP_AND_SWP);
static_assert(static_cast<int>(WrOpcode::kAtomicFetchAndAdd) == IBV_WR_ATOMIC_FETCH_AND_ADD);
static_assert(static_cast<int>(WrOpcode::kLocalInv) == IBV_WR_LOCAL_INV);
static_assert(static_cast<int>(WrOpcode::kBindMw) == IBV_WR_BIND_MW);
static_assert(static_cast<int>(WrOpcode::kSendWithInv) == IBV_WR_SEND_WITH_INV);
static_assert(static_cast<int>(WrOpcode::kTso) == IBV_WR_TSO);
static_assert(static_cast<int>(WrOpcode::kDriver1) == IBV_WR_DRIVER1);
static_assert(static_cast<int>(WrOpcode::kAtomicWrite) == IBV_WR_ATOMIC_WRITE);

// WcOpcode (ibv_wc_opcode)
static_assert(static_cast<int>(WcOpcode::kSend) == IBV_WC_SEND);
static_assert(static_cast<int>(WcOpcode::kRdmaWrite) == IBV_WC_RDMA_WRITE);
static_assert(static_cast<int>(WcOpcode::kRdmaRead) == IBV_WC_RDMA_READ);
static_assert(static_cast<int>(WcOpcode::kCompSwap) == IBV_WC_COMP_SWAP);
static_assert(static_cast<int>(WcOpcode::kFetchAdd) == IBV_WC_FETCH_ADD);
static_assert(static_cast<int>(WcOpcode::kBindMw) == IBV_WC_BIND_MW);
static_assert(static_cast<int>(WcOpcode::kLocalInv) == IBV_WC_LOCAL_INV);
static_assert(static_cast<int>(WcOpcode::kTso) == IBV_WC_TSO);
static_assert(static_cast<int>(WcOpcode::kAtomicWrite) == IBV_WC_ATOMIC_WRITE);
static_assert(static_cast<int>(WcOpcode::kRecv) == IBV_WC_RECV);
static_assert(static_cast<int>(WcOpcode::kRecvRdmaWithImm) == IBV_WC_RECV_RDMA_WITH_IMM);

// WcStatus (ibv_wc_status)
static_assert(static_cast<int>(WcStatus::kSuccess) == IBV_WC_SUCCESS);
static_assert(static_cast<int>(WcStatus::kLocLenErr) == IBV_WC_LOC_LEN_ERR);
static_assert(static_cast<int>(WcStatus::kLocQpOpErr) == IBV_WC_LOC_QP_OP_ERR);
static_assert(static_cast<int>(WcStatus::kLocEecOpErr) == IBV_WC_LOC_EEC_OP_ERR);
static_assert(static_cast<int>(WcStatus::kLocProtErr) == IBV_WC_LOC_PROT_ERR);
static_assert(static_cast<int>(WcStatus::kWrFlushErr) == IBV_WC_WR_FLUSH_ERR);
static_assert(static_cast<int>(WcStatus::kMwBindErr) == IBV_WC_MW_BIND_ERR);
static_assert(static_cast<int>(WcStatus::kBadRespErr) == IBV_WC_BAD_RESP_ERR);
static_assert(static_cast<int>(WcStatus::kLocAccessErr) == IBV_WC_LOC_ACCESS_ERR);
static_assert(static_cast<int>(WcStatus::kRemInvReqErr) == IBV_WC_REM_INV_REQ_ERR);
static_assert(static_cast<int>(WcStatus::kRemAccessErr) == IBV_WC_REM_ACCESS_ERR);
static_assert(static_cast<int>(WcStatus::kRemOpErr) == IBV_WC_REM_OP_ERR);
static_assert(static_cast<int>(WcStatus::kRetryExcErr) == IBV_WC_RETRY_EXC_ERR);
static_assert(static_cast<int>(WcStatus::kRnrRetryExcErr) == IBV_WC_RNR_RETRY_EXC_ERR);
static_assert(static_cast<int>(WcStatus::kLocRddViolErr) == IBV_WC_LOC_RDD_VIOL_ERR);
static_assert(static_cast<int>(WcStatus::kRemInvRdReqErr) == IBV_WC_REM_INV_RD_REQ_ERR);
static_assert(static_cast<int>(WcStatus::kRemAbortErr) == IBV_WC_REM_ABORT_ERR);
static_assert(static_cast<int>(WcStatus::kInvEecnErr) == IBV_WC_INV_EECN_ERR);
static_assert(static_cast<int>(WcStatus::kInvEecStateErr) == IBV_WC_INV_EEC_STATE_ERR);
static_assert(static_cast<int>(WcStatus::kFatalErr) == IBV_WC_FATAL_ERR);
static_assert(static_cast<int>(WcStatus::kRespTimeoutErr) == IBV_WC_RESP_TIMEOUT_ERR);
static_assert(static_cast<int>(WcStatus::kGeneralErr) == IBV_WC_GENERAL_ERR);
static_assert(static_cast<int>(WcStatus::kTmErr) == IBV_WC_TM_ERR);
static_assert(static_cast<int>(WcStatus::kTmRndvIncomplete) == IBV_WC_TM_RNDV_INCOMPLETE);

// wc_flag:: (ibv_wc_flags)
static_assert(wc_flag::kGrh == IBV_WC_GRH);
static_assert(wc_flag::kWithImm == IBV_WC_WITH_IMM);
static_assert(wc_flag::kIpCsumOk == IBV_WC_IP_CSUM_OK);
static_assert(wc_flag::kWithInv == IBV_WC_WITH_INV);
// rereg_flag:: (ibv_rereg_mr_flags)
static_assert(rereg_flag::kChangeTranslation == IBV_REREG_MR_CHANGE_TRANSLATION);
static_assert(rereg_flag::kChangePd == IBV_REREG_MR_CHANGE_PD);
static_assert(rereg_flag::kChangeAccess == IBV_REREG_MR_CHANGE_ACCESS);

// access:: (ibv_access_flags)
static_assert(access::kLocalWrite == IBV_ACCESS_LOCAL_WRITE);
static_assert(access::kRemoteWrite == IBV_ACCESS_REMOTE_WRITE);
static_assert(access::kRemoteRead == IBV_ACCESS_REMOTE_READ);
static_assert(access::kRemoteAtomic == IBV_ACCESS_REMOTE_ATOMIC);
static_assert(access::kMwBind == IBV_ACCESS_MW_BIND);
static_assert(static_cast<int>(MwType::kType1) == IBV_MW_TYPE_1);
static_assert(static_cast<int>(MwType::kType2) == IBV_MW_TYPE_2);
static_assert(access::kZeroBased == IBV_ACCESS_ZERO_BASED);
static_assert(access::kOnDemand == IBV_ACCESS_ON_DEMAND);
static_assert(access::kHugetlb == IBV_ACCESS_HUGETLB);
static_assert(access::kRelaxedOrdering == IBV_ACCESS_RELAXED_ORDERING);

// send_flag:: (ibv_send_flags)
static_assert(send_flag::kFence == IBV_SEND_FENCE);
static_assert(send_flag::kSignaled == IBV_SEND_SIGNALED);
static_assert(send_flag::kSolicited == IBV_SEND_SOLICITED);
static_assert(send_flag::kInline == IBV_SEND_INLINE);
static_assert(send_flag::kIpCsum == IBV_SEND_IP_CSUM);

// EventType (ibv_event_type)
static_assert(static_cast<int>(EventType::kCqErr) == IBV_EVENT_CQ_ERR);
static_assert(static_cast<int>(EventType::kQpFatal) == IBV_EVENT_QP_FATAL);
static_assert(static_cast<int>(EventType::kQpReqErr) == IBV_EVENT_QP_REQ_ERR);
static_assert(static_cast<int>(EventType::kQpAccessErr) == IBV_EVENT_QP_ACCESS_ERR);
static_assert(static_cast<int>(EventType::kCommEst) == IBV_EVENT_COMM_EST);
static_assert(static_cast<int>(EventType::kSqDrained) == IBV_EVENT_SQ_DRAINED);
static_assert(static_cast<int>(EventType::kPathMig) == IBV_EVENT_PATH_MIG);
static_assert(static_cast<int>(EventType::kPathMigErr) == IBV_EVENT_PATH_MIG_ERR);
static_assert(static_cast<int>(EventType::kDeviceFatal) == IBV_EVENT_DEVICE_FATAL);
static_assert(static_cast<int>(EventType::kPortActive) == IBV_EVENT_PORT_ACTIVE);
static_assert(static_cast<int>(EventType::kPortErr) == IBV_EVENT_PORT_ERR);
static_assert(static_cast<int>(EventType::kLidChange) == IBV_EVENT_LID_CHANGE);
static_assert(static_cast<int>(EventType::kPkeyChange) == IBV_EVENT_PKEY_CHANGE);
static_assert(static_cast<int>(EventType::kSmChange) == IBV_EVENT_SM_CHANGE);
static_assert(static_cast<int>(EventType::kSrqErr) == IBV_EVENT_SRQ_ERR);
static_assert(static_cast<int>(EventType::kSrqLimitReached) == IBV_EVENT_SRQ_LIMIT_REACHED);
static_assert(static_cast<int>(EventType::kQpLastWqeReached) == IBV_EVENT_QP_LAST_WQE_REACHED);
static_assert(static_cast<int>(EventType::kClientReregister) == IBV_EVENT_CLIENT_REREGISTER);
static_assert(static_cast<int>(EventType::kGidChange) == IBV_EVENT_GID_CHANGE);
static_assert(static_cast<int>(EventType::kWqFatal) == IBV_EVENT_WQ_FATAL);

// Mtu (ibv_mtu)
static_assert(static_cast<int>(Mtu::k256) == IBV_MTU_256);
static_assert(static_cast<int>(Mtu::k512) == IBV_MTU_512);
static_assert(static_cast<int>(Mtu::k1024) == IBV_MTU_1024);
static_assert(static_cast<int>(Mtu::k2048) == IBV_MTU_2048);
static_assert(static_cast<int>(Mtu::k4096) == IBV_MTU_4096);

// PortState (ibv_port_state)
static_assert(static_cast<int>(PortState::kNop) == IBV_PORT_NOP);
static_assert(static_cast<int>(PortState::kDown) == IBV_PORT_DOWN);
static_assert(static_cast<int>(PortState::kInit) == IBV_PORT_INIT);
static_assert(static_cast<int>(PortState::kArmed) == IBV_PORT_ARMED);
static_assert(static_cast<int>(PortState::kActive) == IBV_PORT_ACTIVE);

// LinkLayer (IBV_LINK_LAYER_*)
static_assert(static_cast<int>(LinkLayer::kUnspecified) == IBV_LINK_LAYER_UNSPECIFIED);
static_assert(static_cast<int>(LinkLayer::kInfiniBand) == IBV_LINK_LAYER_INFINIBAND);
static_assert(static_cast<int>(LinkLayer::kEthernet) == IBV_LINK_LAYER_ETHERNET);

// AtomicCap (ibv_atomic_cap)
static_assert(static_cast<int>(AtomicCap::kNone) == IBV_ATOMIC_NONE);
static_assert(static_cast<int>(AtomicCap::kHca) == IBV_ATOMIC_HCA);
static_assert(static_cast<int>(AtomicCap::kGlob) == IBV_ATOMIC_GLOB);
// Sizes: the state count and the standard mask space match libibverbs.
static_assert(static_cast<int>(QpState::kErr) + 1 == IBV_QPS_UNKNOWN);
static_assert(kNumQpStates == IBV_QPS_UNKNOWN);
static_assert(attr::kStandardBits == ((IBV_QP_DEST_QPN << 1) - 1));

}  // namespace
}  // namespace qptwin::hw
