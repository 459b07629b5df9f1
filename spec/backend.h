// The verbs-shaped backend interface. model/ (SystemC) and hw/ (libibverbs) implement it;
// tests/ and tools/ are written once against it.
//
// Contract (every method):
//  1. Returns 0 or a positive errno value exactly as the verbs call would (EINVAL, ENOMEM,
//     EBUSY, EOPNOTSUPP, ...). Exceptions never cross this interface; nothing asserts on
//     bad input. Completion statuses are data in WorkCompletion, not return codes.
//  2. Objects are named by handles (small integers, 0 = none). A handle that is null, of
//     another device, or already destroyed gives EINVAL, never a crash.
//  3. Validate first, then change: a call that fails changes nothing (a rejected modify
//     leaves the QP's state and attributes as they were).
//  4. Destroy order is the caller's: destroying a PD/CQ/SRQ/XRCD still in use returns
//     EBUSY. A Device's destructor releases everything still alive (QP, SRQ, XRCD, AH, CQ,
//     MR, PD).
//  5. Threading: one Device is used from one thread at a time (as the tests and the CLI
//     do). hw: separate Backends are independent; each may be used on its own thread.
//     model: SystemC has one kernel per process and is not thread-safe, so every model
//     Backend of a process, with every Device opened from it, belongs to the thread that
//     made the first model Backend, for the rest of the process. On any other thread
//     MakeModelBackend returns nullptr (with the reason), calls returning an errno return
//     EPERM (PollCq: -EPERM), NowNs() returns 0 and Advance() does nothing: a violation
//     is an error return, never a race or an abort.
//  6. Time: the model advances simulated time only inside Wait*/Advance calls; hw uses the
//     real clock. NowNs() is relative to the Backend's creation.
#pragma once

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "spec/vocabulary.h"

namespace qptwin {

template <typename Tag>
struct Handle {
  uint32_t id = 0;
  explicit operator bool() const { return id != 0; }
  friend bool operator==(Handle a, Handle b) { return a.id == b.id; }
  friend bool operator!=(Handle a, Handle b) { return a.id != b.id; }
};
using PdHandle = Handle<struct PdTag>;
using MrHandle = Handle<struct MrTag>;
using CqHandle = Handle<struct CqTag>;
using SrqHandle = Handle<struct SrqTag>;
using QpHandle = Handle<struct QpTag>;
using AhHandle = Handle<struct AhTag>;
using ChannelHandle = Handle<struct ChannelTag>;
using XrcdHandle = Handle<struct XrcdTag>;  // an XRC domain (ibv_xrcd)
using MwHandle = Handle<struct MwTag>;      // a memory window (ibv_mw)

// ---- Device and port -------------------------------------------------------------------

struct DeviceAttr {  // ibv_device_attr (the fields qptwin uses)
  std::string name;
  uint64_t max_mr_size = 0;
  uint32_t vendor_id = 0;
  uint32_t vendor_part_id = 0;
  int max_qp = 0;
  int max_qp_wr = 0;
  int max_sge = 0;
  int max_sge_rd = 0;
  int max_cq = 0;
  int max_cqe = 0;
  int max_mr = 0;
  int max_pd = 0;
  int max_ah = 0;
  int max_qp_rd_atom = 0;       // outstanding READ/ATOMIC as requester (max_rd_atomic)
  int max_qp_init_rd_atom = 0;  // as responder (max_dest_rd_atomic)
  int max_srq = 0;
  int max_srq_wr = 0;
  int max_srq_sge = 0;
  int max_inline_data = 0;      // not in ibv_device_attr; the provider's inline limit
  uint16_t max_pkeys = 0;
  AtomicCap atomic_cap = AtomicCap::kNone;
  uint8_t phys_port_cnt = 0;
  // The rest of ibv_device_attr (the GUIDs and fw_ver, which name one device, are left out).
  uint64_t page_size_cap = 0;
  uint32_t hw_ver = 0;
  uint32_t device_cap_flags = 0;  // IBV_DEVICE_* bits
  int max_ee_rd_atom = 0;
  int max_res_rd_atom = 0;
  int max_ee_init_rd_atom = 0;
  int max_ee = 0;
  int max_rdd = 0;
  int max_mw = 0;
  int max_raw_ipv6_qp = 0;
  int max_raw_ethy_qp = 0;
  int max_mcast_grp = 0;
  int max_mcast_qp_attach = 0;
  int max_total_mcast_qp_attach = 0;
  int max_fmr = 0;
  int max_map_per_fmr = 0;
  uint8_t local_ca_ack_delay = 0;
};

struct Gid {
  std::array<uint8_t, 16> raw{};
  friend bool operator==(const Gid& a, const Gid& b) { return a.raw == b.raw; }
};

struct PortAttr {  // ibv_port_attr (the fields qptwin uses)
  PortState state = PortState::kDown;
  Mtu max_mtu = Mtu::k4096;
  Mtu active_mtu = Mtu::k1024;
  int gid_tbl_len = 0;
  uint32_t max_msg_sz = 0;
  uint16_t pkey_tbl_len = 0;
  uint16_t lid = 0;
  uint8_t lmc = 0;
  uint8_t active_width = 0;
  uint8_t active_speed = 0;
  LinkLayer link_layer = LinkLayer::kUnspecified;
  // The rest of ibv_port_attr.
  uint32_t port_cap_flags = 0;  // IBV_PORT_* bits
  uint16_t port_cap_flags2 = 0;
  uint32_t bad_pkey_cntr = 0;
  uint32_t qkey_viol_cntr = 0;
  uint16_t sm_lid = 0;
  uint8_t sm_sl = 0;
  uint8_t max_vl_num = 0;
  uint8_t subnet_timeout = 0;
  uint8_t init_type_reply = 0;
  uint8_t phys_state = 0;
};

// ---- Address vectors -------------------------------------------------------------------

struct GlobalRoute {  // ibv_global_route
  Gid dgid;
  uint32_t flow_label = 0;
  uint8_t sgid_index = 0;
  uint8_t hop_limit = 64;
  uint8_t traffic_class = 0;
};

struct AhAttr {  // ibv_ah_attr
  GlobalRoute grh;
  uint16_t dlid = 0;
  uint8_t sl = 0;
  uint8_t src_path_bits = 0;
  uint8_t static_rate = 0;
  bool is_global = false;
  uint8_t port_num = 1;
};

// ---- QPs --------------------------------------------------------------------------------

struct QpCap {  // ibv_qp_cap
  uint32_t max_send_wr = 0;
  uint32_t max_recv_wr = 0;
  uint32_t max_send_sge = 0;
  uint32_t max_recv_sge = 0;
  uint32_t max_inline_data = 0;
};

struct QpInitAttr {  // ibv_qp_init_attr (ibv_qp_init_attr_ex for the XRC types)
  QpType qp_type = QpType::kRc;
  PdHandle pd;
  CqHandle send_cq;
  CqHandle recv_cq;
  SrqHandle srq;
  QpCap cap;
  bool sq_sig_all = false;
  // XRC_RECV only (IBV_QP_INIT_ATTR_XRCD): the QP belongs to this XRC domain and has no PD,
  // CQs or queues of its own; pd/send_cq/recv_cq/srq/cap are ignored. XRC_SEND uses pd and
  // send_cq only: recv_cq, srq and the receive caps are ignored (libibverbs cmd.c
  // create_qp_ex_common, ib_uverbs create_qp: max_recv_wr = max_recv_sge = 0).
  XrcdHandle xrcd;
};

struct QpAttr {  // ibv_qp_attr: which fields count is said by the AttrMask beside it
  QpState qp_state = QpState::kReset;
  QpState cur_qp_state = QpState::kReset;
  Mtu path_mtu = Mtu::k1024;
  uint32_t qkey = 0;
  uint32_t rq_psn = 0;
  uint32_t sq_psn = 0;
  uint32_t dest_qp_num = 0;
  AccessFlags qp_access_flags = 0;
  QpCap cap;
  AhAttr ah_attr;
  AhAttr alt_ah_attr;
  uint16_t pkey_index = 0;
  uint16_t alt_pkey_index = 0;
  bool en_sqd_async_notify = false;
  bool sq_draining = false;
  uint8_t max_rd_atomic = 0;
  uint8_t max_dest_rd_atomic = 0;
  uint8_t min_rnr_timer = 0;
  uint8_t port_num = 0;
  uint8_t timeout = 0;
  uint8_t retry_cnt = 0;
  uint8_t rnr_retry = 0;
  uint8_t alt_port_num = 0;
  uint8_t alt_timeout = 0;
  uint32_t rate_limit = 0;
};

namespace rereg_flag {  // ibv_rereg_mr_flags
inline constexpr int kChangeTranslation = 1 << 0;
inline constexpr int kChangePd = 1 << 1;
inline constexpr int kChangeAccess = 1 << 2;
inline constexpr int kKnownMask = kChangeTranslation | kChangePd | kChangeAccess;
}  // namespace rereg_flag

// ---- Memory windows ----------------------------------------------------------------------

struct MwBindInfo {  // ibv_mw_bind_info
  MrHandle mr;       // the region the window opens onto (same PD as the window)
  uint64_t addr = 0;  // where the window starts: a virtual address inside the region
  uint64_t length = 0;  // 0 unbinds (type 1; a type 2 bind of length 0 fails)
  AccessFlags mw_access_flags = 0;  // REMOTE_READ/WRITE/ATOMIC (ZERO_BASED: see BindMw)
};

struct MwBind {  // ibv_mw_bind: the type 1 bind ibv_bind_mw posts
  uint64_t wr_id = 0;
  SendFlags send_flags = 0;
  MwBindInfo bind_info;
  // The window's rkey as the program holds it (ibv_mw.rkey when it calls ibv_bind_mw:
  // providers/rxe rxe_bind_mw binds with ibv_inc_rkey of it and names the window by it).
  // Unset: the backend's own copy (BindMw, Memory windows 2).
  std::optional<uint32_t> mw_rkey;
};

// ---- SRQs ---------------------------------------------------------------------------------

enum class SrqType : uint8_t { kBasic = 0, kXrc = 1 };  // ibv_srq_type: IBV_SRQT_BASIC, _XRC

struct SrqInitAttr {  // ibv_srq_init_attr_ex (the fields qptwin uses)
  SrqType srq_type = SrqType::kBasic;
  PdHandle pd;
  uint32_t max_wr = 0;
  uint32_t max_sge = 0;
  // XRC only: the SRQ's XRC domain and the CQ its receive completions go to (an XRC SRQ
  // belongs to no QP: IBTA 9.8 / ibv_create_srq_ex(3)). The PD is the one a message to
  // this SRQ is checked against (receive buffers, and rkeys of RDMA/atomics).
  XrcdHandle xrcd;
  CqHandle cq;
};

struct SrqAttr {  // ibv_srq_attr
  uint32_t max_wr = 0;
  uint32_t max_sge = 0;
  uint32_t srq_limit = 0;  // 0: not armed; else SRQ_LIMIT_REACHED when fewer WRs remain
};

namespace srq_attr {  // ibv_srq_attr_mask
inline constexpr uint32_t kMaxWr = 1u << 0;  // IBV_SRQ_MAX_WR: resize
inline constexpr uint32_t kLimit = 1u << 1;  // IBV_SRQ_LIMIT: arm the limit event
}  // namespace srq_attr

// ---- Work requests and completions -------------------------------------------------------

struct Sge {  // ibv_sge: addr is a process virtual address inside a registered MR
  uint64_t addr = 0;
  uint32_t length = 0;
  uint32_t lkey = 0;
};

struct SendWr {  // ibv_send_wr
  uint64_t wr_id = 0;
  std::vector<Sge> sg_list;
  WrOpcode opcode = WrOpcode::kSend;
  SendFlags send_flags = 0;
  uint32_t imm_data = 0;  // host byte order in qptwin (htonl is the backend's business)
  // RDMA and atomics
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  uint64_t compare_add = 0;
  uint64_t swap = 0;
  // UD
  AhHandle ah;
  uint32_t remote_qpn = 0;
  uint32_t remote_qkey = 0;
  // XRC_SEND: the XRC SRQ at the target that receives (ibv_send_wr.qp_type.xrc.remote_srqn).
  uint32_t remote_srqn = 0;
  // BIND_MW (ibv_send_wr.bind_mw): the window, and what it is bound to; `rkey` above is the
  // window's rkey after the bind (bind_mw.rkey; only its low 8 bits are the consumer's key,
  // rxe_do_bind_mw). LOCAL_INV and SEND_WITH_INV name the rkey to invalidate in imm_data
  // (ibv_send_wr's union of imm_data and invalidate_rkey, host order).
  MwHandle mw;
  MwBindInfo bind_info;
  // BIND_MW: the window's rkey as the program names it (ibv_send_wr.bind_mw.mw->rkey at the
  // post, ibv_wr_bind_mw's mw->rkey at that call: providers/rxe passes it as mw_rkey and the
  // kernel's rxe_bind_mw fails the bind unless it is the window's current rkey). Unset: the
  // backend's own copy of the program's rkey (Memory windows 2).
  std::optional<uint32_t> mw_rkey;
};

struct RecvWr {  // ibv_recv_wr
  uint64_t wr_id = 0;
  std::vector<Sge> sg_list;
};

struct WorkCompletion {  // ibv_wc
  uint64_t wr_id = 0;
  WcStatus status = WcStatus::kSuccess;
  WcOpcode opcode = WcOpcode::kSend;  // meaningful only for SUCCESS (IBTA: undefined else)
  uint32_t vendor_err = 0;
  uint32_t byte_len = 0;
  uint32_t imm_data = 0;  // host byte order; valid when wc_flags has wc_flag::kWithImm
  uint32_t qp_num = 0;
  uint32_t src_qp = 0;
  uint32_t wc_flags = 0;
  uint16_t pkey_index = 0;
  uint16_t slid = 0;
  uint8_t sl = 0;
  uint8_t dlid_path_bits = 0;
};

struct AsyncEvent {  // ibv_async_event
  EventType type = EventType::kQpFatal;
  QpHandle qp;
  CqHandle cq;
  SrqHandle srq;
  uint8_t port_num = 0;
  uint64_t time_ns = 0;  // when it was received (Backend::NowNs)
};

// A recorded state change of a QP (modify call or device event), for tools and teaching.
struct StateChange {
  uint64_t time_ns = 0;
  QpState from = QpState::kReset;
  QpState to = QpState::kReset;
  std::string cause;  // "modify", or the device event ("flush on send error", "RNR retry exceeded")
};

// What one side needs from the other to connect (exchanged out of band on hw).
struct ConnectionInfo {
  uint32_t qp_num = 0;
  uint16_t lid = 0;
  Gid gid;
  uint8_t port_num = 1;
  LinkLayer link_layer = LinkLayer::kEthernet;
};

// ---- The device ----------------------------------------------------------------------------

class Device {
 public:
  virtual ~Device() = default;

  virtual std::string Name() const = 0;
  [[nodiscard]] virtual int QueryDevice(DeviceAttr* out) = 0;
  // port_num counts from 1; EINVAL for a port that does not exist.
  [[nodiscard]] virtual int QueryPort(uint8_t port_num, PortAttr* out) = 0;
  [[nodiscard]] virtual int QueryGid(uint8_t port_num, int index, Gid* out) = 0;
  // The GID index to use for connections on this port (RoCE v2 IPv4-mapped where present).
  [[nodiscard]] virtual int DefaultGidIndex(uint8_t port_num, int* index) = 0;

  [[nodiscard]] virtual int AllocPd(PdHandle* out) = 0;
  [[nodiscard]] virtual int DeallocPd(PdHandle pd) = 0;  // EBUSY while MRs/QPs/SRQs/AHs use it

  // Registers `length` bytes of memory that the backend allocates (zeroed, page aligned) with
  // `access` (access::*). *buf receives its address: Sge.addr and remote addresses point
  // into [*buf, *buf + length). REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE: EINVAL.
  [[nodiscard]] virtual int RegMr(PdHandle pd, size_t length, AccessFlags access, MrHandle* out,
                                  uint8_t** buf, uint32_t* lkey, uint32_t* rkey) = 0;
  [[nodiscard]] virtual int DeregMr(MrHandle mr) = 0;
  // As ibv_rereg_mr with `flags` of rereg_flag::. CHANGE_TRANSLATION: `length` new bytes the
  // backend allocates (zeroed, page aligned; *buf receives them, the old ones are released);
  // CHANGE_PD: `pd`; CHANGE_ACCESS: `access` (as RegMr checks it). *lkey/*rkey receive the
  // keys after it (they may change). EINVAL for an unknown flag or a translation of 0 bytes
  // (libibverbs ibv_rereg_mr); a device without re-registration says so
  // (Behaviour::rereg_mr_errno). On error the region is unchanged.
  [[nodiscard]] virtual int ReregMr(MrHandle mr, int flags, PdHandle pd, size_t length,
                                    AccessFlags access, uint8_t** buf, uint32_t* lkey,
                                    uint32_t* rkey) = 0;

  // Memory windows (ibv_alloc_mw(3), ibv_bind_mw(3), ibv_post_send(3) BIND_MW / LOCAL_INV /
  // SEND_WITH_INV), as rxe does them (sources: model/engine/window.h; measured on rxe 6.1 by
  // tests/conformance/memory_window_test.cc; the differences: docs/differences.md rows 28-30):
  //  1. AllocMw: *rkey is the window's rkey (index << 8 | key byte; rxe's window indices lie
  //     above every region's). EINVAL for a type other than 1 or 2; EOPNOTSUPP on a device
  //     without windows. A type 1 window is bound to nothing (remote access through it
  //     fails) until BindMw; a type 2 window is free until a BIND_MW WR binds it.
  //  2. BindMw (type 1; EINVAL for type 2, EPERM when bind_info.mr is of another PD:
  //     libibverbs ibv_bind_mw) posts a BIND_MW WR on `qp` (RC/UC, else EINVAL) whose rkey
  //     is the window's with the key byte incremented (ibv_inc_rkey); *rkey receives it at
  //     once. EINVAL for ZERO_BASED (providers/rxe) and without an MR (rxe's provider would
  //     dereference it; length 0 with an MR unbinds). A BIND_MW WR (SendWr::mw, bind_info,
  //     rkey = the new rkey, of which the device takes only the key byte) binds type 1 or
  //     2. The WR names the window by the program's rkey for it (SendWr::mw_rkey, MwBind::
  //     mw_rkey: what ibv_mw.rkey holds, as providers/rxe passes it), and the bind fails
  //     unless that is the window's current rkey. A caller that leaves mw_rkey unset gets
  //     the backend's copy of the program's rkey: moved on at each post (type 1 by BindMw
  //     as ibv_bind_mw does; type 2 to the WR's key byte, which libibverbs leaves to the
  //     program). The checks against the region (MW_BIND access, LOCAL_
  //     WRITE for remote write/atomic rights, bounds, type 2: free, same PD as the QP,
  //     length > 0) run when the WR executes: a failure completes it with IBV_WC_MW_BIND_ERR
  //     (the QP goes to ERR) and the window keeps its old rkey, so a later bind naming the
  //     new one fails too (ibv_bind_mw(3) NOTES: the program must restore the rkey: with
  //     mw_rkey given, it does so by naming the old one).
  //  3. A remote READ/WRITE/ATOMIC through a window's rkey needs the window bound, the
  //     access in the window's rights (the region's do not matter), for type 2 the QP that
  //     bound it as the responder, and the bytes inside the window (IBTA; rxe checks only
  //     the region's bounds: Behaviour::mw_range_checked_against_mr). A ZERO_BASED window
  //     (type 2) takes offsets from its start. Else: a remote access error, both QPs in ERR.
  //  4. LOCAL_INV / SEND_WITH_INV of a bound type 2 window's rkey make it free (rebindable,
  //     no remote access); a type 1 window, a region's rkey or a stale key cannot be
  //     invalidated: LOCAL_INV completes with LOC_QP_OP_ERR (QP to ERR); SEND_WITH_INV's
  //     receive with REM_INV_REQ_ERR (receiver to ERR) while the SEND succeeds. The receive
  //     of a SEND_WITH_INV has IBV_WC_WITH_INV and the rkey in imm_data (IBTA), or on rxe
  //     IBV_WC_IP_CSUM_OK and no rkey (Behaviour::recv_inv_flag_as_ip_csum_ok).
  //  5. DeallocMw of a bound window succeeds and unbinds it. DeregMr of a region a window is
  //     bound to fails (Behaviour::dereg_mr_bound_mw_errno); DeallocPd while windows use the
  //     PD is EBUSY.
  [[nodiscard]] virtual int AllocMw(PdHandle pd, MwType type, MwHandle* out, uint32_t* rkey) = 0;
  [[nodiscard]] virtual int DeallocMw(MwHandle mw) = 0;
  [[nodiscard]] virtual int BindMw(QpHandle qp, MwHandle mw, const MwBind& bind,
                                   uint32_t* rkey) = 0;

  [[nodiscard]] virtual int CreateCompChannel(ChannelHandle* out) = 0;
  [[nodiscard]] virtual int DestroyCompChannel(ChannelHandle ch) = 0;  // EBUSY while CQs use it
  // cqe: minimum depth (the device may round up: *actual_cqe). EINVAL beyond max_cqe or < 1.
  [[nodiscard]] virtual int CreateCq(int cqe, ChannelHandle channel, CqHandle* out,
                                     int* actual_cqe) = 0;
  [[nodiscard]] virtual int DestroyCq(CqHandle cq) = 0;  // EBUSY while a QP or SRQ uses it
  // As ibv_resize_cq: at least `cqe` entries (*actual_cqe: what the device made); the
  // completions not yet polled are kept, in order. EINVAL for cqe < 1 or beyond max_cqe, or
  // fewer than the completions the CQ holds (rxe_cq_chk_attr).
  [[nodiscard]] virtual int ResizeCq(CqHandle cq, int cqe, int* actual_cqe) = 0;
  // As ibv_poll_cq: returns the number of completions (>= 0) written to wc[0..n), or a
  // negative errno (-EINVAL for a bad handle). Never blocks, never advances time.
  virtual int PollCq(CqHandle cq, int num_entries, WorkCompletion* wc) = 0;
  [[nodiscard]] virtual int ReqNotifyCq(CqHandle cq, bool solicited_only) = 0;
  // Waits for the next CQ event on the channel (ibv_get_cq_event); ETIMEDOUT after timeout_ns.
  [[nodiscard]] virtual int GetCqEvent(ChannelHandle ch, uint64_t timeout_ns, CqHandle* cq) = 0;
  virtual void AckCqEvents(CqHandle cq, unsigned n) = 0;

  // Polls `cq` until `n` completions were collected (appended to *out) or timeout_ns passed
  // (simulated time on the model, real time on hw). 0 when n were collected, else ETIMEDOUT
  // (with what was collected appended).
  [[nodiscard]] virtual int WaitForCompletions(CqHandle cq, int n, uint64_t timeout_ns,
                                               std::vector<WorkCompletion>* out) = 0;

  [[nodiscard]] virtual int CreateSrq(PdHandle pd, uint32_t max_wr, uint32_t max_sge,
                                      SrqHandle* out) = 0;
  [[nodiscard]] virtual int DestroySrq(SrqHandle srq) = 0;  // EBUSY while a QP uses it
  [[nodiscard]] virtual int PostSrqRecv(SrqHandle srq, const std::vector<RecvWr>& wrs,
                                        size_t* bad_wr) = 0;
  // As ibv_modify_srq: `mask` of srq_attr:: bits. kMaxWr resizes (where the device can;
  // EINVAL below the WRs queued or beyond max_srq_wr), kLimit arms SRQ_LIMIT_REACHED: the
  // event fires once when the WRs queued fall below srq_limit, and disarms (srq_limit 0).
  // EINVAL for a limit beyond max_wr. On error nothing changes.
  [[nodiscard]] virtual int ModifySrq(SrqHandle srq, const SrqAttr& attr, uint32_t mask) = 0;
  // As ibv_query_srq: the granted max_wr and max_sge, and the armed srq_limit (0: none).
  [[nodiscard]] virtual int QuerySrq(SrqHandle srq, SrqAttr* out) = 0;
  // As ibv_create_srq_ex: a basic SRQ (as CreateSrq) or an XRC SRQ (xrcd, cq and pd
  // required: EINVAL without them; on a device without XRC no XRCD can be opened).
  [[nodiscard]] virtual int CreateSrqEx(const SrqInitAttr& init, SrqHandle* out) = 0;
  // As ibv_get_srq_num: the SRQ number an XRC sender names in SendWr::remote_srqn.
  // EOPNOTSUPP on a device without XRC (libibverbs: no get_srq_num op).
  [[nodiscard]] virtual int SrqNum(SrqHandle srq, uint32_t* srq_num) = 0;

  // As ibv_open_xrcd with fd -1 and O_CREAT (ibv_open_xrcd(3): a new XRC domain associated
  // with no file). EOPNOTSUPP on a device without XRC (what libibverbs returns, e.g. rxe).
  [[nodiscard]] virtual int OpenXrcd(XrcdHandle* out) = 0;
  // As ibv_close_xrcd: EBUSY while an XRC SRQ or an XRC_RECV QP uses it.
  [[nodiscard]] virtual int CloseXrcd(XrcdHandle xrcd) = 0;

  [[nodiscard]] virtual int CreateAh(PdHandle pd, const AhAttr& attr, AhHandle* out) = 0;
  [[nodiscard]] virtual int DestroyAh(AhHandle ah) = 0;

  // As ibv_create_qp. EINVAL for caps beyond the device's limits, EOPNOTSUPP for a QP type
  // the device does not support. *actual receives the caps granted (may be rounded up).
  // XRC types as ibv_create_qp_ex (see QpInitAttr::xrcd): XRC_SEND sends only (PostRecv
  // EINVAL); XRC_RECV has no queues (PostSend and PostRecv EINVAL), it only receives into
  // the XRC SRQs of its domain.
  [[nodiscard]] virtual int CreateQp(const QpInitAttr& init, QpHandle* out, QpCap* actual) = 0;
  [[nodiscard]] virtual int DestroyQp(QpHandle qp) = 0;
  [[nodiscard]] virtual int QpNum(QpHandle qp, uint32_t* qp_num) = 0;
  // As ibv_modify_qp: legality by the spec's table (qp_state_table.h), values by
  // attr_checks.h, plus the device's own rules. Returns 0 or errno; on error nothing changes.
  [[nodiscard]] virtual int ModifyQp(QpHandle qp, const QpAttr& attr, AttrMask mask) = 0;
  [[nodiscard]] virtual int QueryQp(QpHandle qp, QpAttr* attr, QpInitAttr* init) = 0;
  // As ibv_post_send/ibv_post_recv: on error *bad_wr is the index of the first WR not posted;
  // WRs before it were posted. On success *bad_wr is unchanged. bad_wr may be null (unlike
  // libibverbs, whose providers write through it): the post is the same, the index is not
  // reported (PostSrqRecv too; tests/conformance posting_test NullBadWrPostsTheSame).
  // "Posted" means queued on the device: each posted WR completes (or is flushed, or is
  // discarded by a move to RESET) exactly once. A device may post WRs and still return an
  // error: rxe's provider writes every valid WR into the send ring before its doorbell
  // refuses a QP below RTS (EINVAL with bad_wr NULL), so PostSend reports EINVAL with
  // *bad_wr == wrs.size() there (or the index of the WR that did not fit or was invalid);
  // those WRs run once the QP is in RTS, or are flushed by ERR. A device that refuses
  // before queueing reports EINVAL with *bad_wr == 0.
  [[nodiscard]] virtual int PostSend(QpHandle qp, const std::vector<SendWr>& wrs,
                                     size_t* bad_wr) = 0;
  [[nodiscard]] virtual int PostRecv(QpHandle qp, const std::vector<RecvWr>& wrs,
                                     size_t* bad_wr) = 0;

  // Async events received so far and not yet taken, oldest first (non-blocking).
  virtual std::vector<AsyncEvent> TakeAsyncEvents() = 0;
  // Waits until an async event of `type` (for `qp` when given) has arrived or timeout_ns
  // passed; the event stays queued for TakeAsyncEvents. 0 or ETIMEDOUT.
  [[nodiscard]] virtual int WaitForAsyncEvent(EventType type, QpHandle qp, uint64_t timeout_ns) = 0;

  // The QP's recorded state changes, oldest first.
  [[nodiscard]] virtual int QpHistory(QpHandle qp, std::vector<StateChange>* out) = 0;
  // The recorded changes from the `first`-th on (*out replaced): for a caller that looks
  // after every step, in time proportional to what is new. The default copies QpHistory.
  [[nodiscard]] virtual int QpHistorySince(QpHandle qp, size_t first,
                                           std::vector<StateChange>* out) {
    const int rc = QpHistory(qp, out);
    if (rc == 0) out->erase(out->begin(), out->begin() + std::min(first, out->size()));
    return rc;
  }
  // True when QpHistory records every state change the device makes (the model); on a real
  // device a change the driver makes on its own (an error) is seen only by QueryQp.
  virtual bool HistoryIsComplete() const { return false; }
  // A number that changes whenever a QP of this device records a state change, so a caller
  // that looks after every step asks QpHistorySince only when it changed; 0: the device
  // keeps no such number (ask every time, the default).
  virtual uint64_t HistoryVersion() const { return 0; }
  // What a peer needs to connect to this QP.
  [[nodiscard]] virtual int LocalConnectionInfo(QpHandle qp, ConnectionInfo* out) = 0;

  // Simulated host threads (the model: model/timing.h contract 4). The calls that follow,
  // on every Device of this device, are made by host thread `thread` (0 until one is
  // chosen), whose time is its own: several threads post and poll in parallel while sharing
  // the NIC. *free_ns (if not null) gets the simulated time at which that thread is next
  // free. EINVAL: thread outside 0..4095. A real device runs on real threads: EOPNOTSUPP.
  [[nodiscard]] virtual int UseHostThread(int thread, uint64_t* free_ns) {
    (void)thread;
    (void)free_ns;
    return EOPNOTSUPP;
  }
};

// ---- The backend: a world of devices with one clock ---------------------------------------

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string Kind() const = 0;  // "model" or "hw"
  virtual std::vector<std::string> ListDevices() = 0;
  // Opens a device by name ("" = the first). ENODEV when there is none of that name.
  [[nodiscard]] virtual int OpenDevice(const std::string& name, std::unique_ptr<Device>* out) = 0;
  // Nanoseconds since this Backend was created (simulated on the model).
  virtual uint64_t NowNs() = 0;
  // Lets `ns` pass (simulated time runs on the model; hw sleeps).
  virtual void Advance(uint64_t ns) = 0;
  // The calls so far that the modelled device answers but the real one would not: it would
  // crash its host (rxe 6.1 oopses on some invalidates; its profile names each rule, e.g.
  // Behaviour::invalidate_free_type2_window_faults). One line each, in order, a few at most.
  // Empty on a real device, which cannot tell: it crashes.
  virtual std::vector<std::string> DeviceFaults() const { return {}; }
};

// ---- Helpers every backend and test share ------------------------------------------------

// The address vector that reaches `peer` from a port of `local_link_layer`: GRH with the
// peer's GID on RoCE (sgid_index = local_gid_index), LID otherwise.
AhAttr AddressTo(const ConnectionInfo& peer, int local_gid_index);

}  // namespace qptwin
