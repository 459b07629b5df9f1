// The device list, contexts and device/port/GID/pkey queries (libibverbs device.c and
// verbs.c entry points) for model devices; real devices go to the real libibverbs.
#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "hw/convert.h"
#include "tools/exec/device_attrs.h"
#include "tools/exec/preload.h"

using qptwin::exec::Ctx;
using qptwin::exec::IsModel;
using qptwin::exec::ModelContext;
using qptwin::exec::Preload;
using qptwin::exec::Real;

namespace {

std::mutex list_mu;
std::map<ibv_device**, ibv_device**>* real_lists = new std::map<ibv_device**, ibv_device**>;

int QueryGidEntry(ModelContext* m, uint32_t port, uint32_t index, ibv_gid_entry* e) {
  qptwin::PortAttr pa;
  int err = m->dev->QueryPort(static_cast<uint8_t>(port), &pa);
  if (err) return err;
  if (index >= static_cast<uint32_t>(pa.gid_tbl_len)) return EINVAL;
  qptwin::Gid g;
  err = m->dev->QueryGid(static_cast<uint8_t>(port), static_cast<int>(index), &g);
  if (err) return err;
  if (g == qptwin::Gid{}) return ENODATA;  // an empty entry (rdma-core query_sysfs_gid_entry)
  std::memset(e, 0, sizeof(*e));
  e->gid = qptwin::hw::ToIbvGid(g);
  e->gid_index = index;
  e->port_num = port;
  e->gid_type = pa.link_layer == qptwin::LinkLayer::kEthernet ? IBV_GID_TYPE_ROCE_V2
                                                               : IBV_GID_TYPE_IB;
  e->ndev_ifindex = pa.link_layer == qptwin::LinkLayer::kEthernet ? 1 : 0;  // lo
  return 0;
}

}  // namespace

namespace qptwin::exec {

int QueryPortOp(ibv_context* ctx, uint8_t port, ibv_port_attr* attr, size_t len) {
  ibv_port_attr a;
  int err = 0;
  Preload::Get().Run([&] {
    PortAttr pa;
    err = Ctx(ctx)->dev->QueryPort(port, &pa);
    if (!err) FillPortAttr(pa, &a);
  });
  if (!err) std::memcpy(attr, &a, std::min(len, sizeof(a)));
  return err;
}

int QueryDeviceExOp(ibv_context* ctx, const ibv_query_device_ex_input* input,
                    ibv_device_attr_ex* attr, size_t len) {
  if (input != nullptr && input->comp_mask != 0) return EINVAL;
  ibv_device_attr_ex a{};
  int err = 0;
  ModelContext* m = Ctx(ctx);
  Preload::Get().Run([&] {
    DeviceAttr d;
    err = m->dev->QueryDevice(&d);
    if (!err) FillDeviceAttr(d, m->index, &a.orig_attr);
  });
  if (err) return err;
  if (m->xrc) a.orig_attr.device_cap_flags |= IBV_DEVICE_XRC;
  a.device_cap_flags_ex = a.orig_attr.device_cap_flags;
  a.phys_port_cnt_ex = a.orig_attr.phys_port_cnt;
  std::memcpy(attr, &a, std::min(len, sizeof(a)));
  return 0;
}

}  // namespace qptwin::exec

extern "C" {

ibv_device** ibv_get_device_list(int* num_devices) {
  static auto real = Real(&ibv_get_device_list, "ibv_get_device_list");
  Preload& p = Preload::Get();
  int n_real = 0;
  ibv_device** reals = real != nullptr ? real(&n_real) : nullptr;
  if (reals == nullptr) n_real = 0;
  const int n = p.devices() + n_real;
  auto** list = static_cast<ibv_device**>(calloc(n + 1, sizeof(ibv_device*)));
  if (list == nullptr) {
    if (reals) Real(&ibv_free_device_list, "ibv_free_device_list")(reals);
    errno = ENOMEM;
    return nullptr;
  }
  for (int i = 0; i < p.devices(); ++i) list[i] = p.device(i);
  for (int i = 0; i < n_real; ++i) list[p.devices() + i] = reals[i];
  {
    std::lock_guard<std::mutex> lock(list_mu);
    (*real_lists)[list] = reals;
  }
  if (num_devices) *num_devices = n;
  return list;
}

void ibv_free_device_list(ibv_device** list) {
  static auto real = Real(&ibv_free_device_list, "ibv_free_device_list");
  ibv_device** reals = nullptr;
  {
    std::lock_guard<std::mutex> lock(list_mu);
    auto it = real_lists->find(list);
    if (it == real_lists->end()) {  // not ours
      if (real) real(list);
      return;
    }
    reals = it->second;
    real_lists->erase(it);
  }
  if (reals && real) real(reals);
  free(list);
}

const char* ibv_get_device_name(ibv_device* device) {
  static auto real = Real(&ibv_get_device_name, "ibv_get_device_name");
  if (Preload::Get().DeviceIndex(device) >= 0) return device->name;
  return real(device);
}

__be64 ibv_get_device_guid(ibv_device* device) {
  static auto real = Real(&ibv_get_device_guid, "ibv_get_device_guid");
  const int i = Preload::Get().DeviceIndex(device);
  if (i >= 0) return qptwin::exec::NodeGuid(i);
  return real(device);
}

int ibv_get_device_index(ibv_device* device) {
  static auto real = Real(&ibv_get_device_index, "ibv_get_device_index", "IBVERBS_1.9");
  const int i = Preload::Get().DeviceIndex(device);
  if (i >= 0) return 1000 + i;  // the kernel's indices are small; these never collide
  return real(device);
}

ibv_context* ibv_open_device(ibv_device* device) {
  static auto real = Real(&ibv_open_device, "ibv_open_device");
  Preload& p = Preload::Get();
  const int i = p.DeviceIndex(device);
  if (i < 0) return real(device);
  auto* m = new ModelContext();
  m->index = i;
  int err = 0;
  p.Run([&] {
    err = p.backend()->OpenDevice("mdev" + std::to_string(i), &m->dev);
    if (err) return;
    p.contexts().push_back(m);
    qptwin::XrcdHandle probe;  // does the device have XRC? (IBV_DEVICE_XRC below)
    if (m->dev->OpenXrcd(&probe) == 0) {
      m->xrc = true;
      (void)m->dev->CloseXrcd(probe);
    }
  });
  if (err) {
    delete m;
    errno = err;
    return nullptr;
  }
  ibv_context& c = m->vctx.context;
  c.device = device;
  // A descriptor of its own, so that dup() and close() of it behave (pyverbs dups it to
  // import the device; ibv_import_device on it says EOPNOTSUPP, preload_misc.cc).
  c.cmd_fd = memfd_create("qptwin-context", MFD_CLOEXEC);
  c.async_fd = eventfd(0, EFD_CLOEXEC);
  qptwin::exec::RegisterModelFd(c.async_fd);
  c.num_comp_vectors = 2;  // rxe: num_possible_cpus() (this machine: 2)
  pthread_mutex_init(&c.mutex, nullptr);
  c.abi_compat = reinterpret_cast<void*>(UINTPTR_MAX);  // __VERBS_ABI_IS_EXTENDED
  m->vctx.sz = sizeof(verbs_context);
  qptwin::exec::InstallOps(m);
  return &c;
}

int ibv_close_device(ibv_context* context) {
  static auto real = Real(&ibv_close_device, "ibv_close_device");
  if (!IsModel(context)) return real(context);
  ModelContext* m = Ctx(context);
  Preload& p = Preload::Get();
  p.Run([&] {
    p.FlushBridge();
    auto& cs = p.contexts();
    cs.erase(std::remove(cs.begin(), cs.end(), m), cs.end());
    m->dev.reset();  // releases every object still alive (spec/backend.h contract 4)
  });
  qptwin::exec::UnregisterModelFd(context->async_fd);
  close(context->async_fd);
  close(context->cmd_fd);
  delete m;
  return 0;
}

int ibv_query_device(ibv_context* context, ibv_device_attr* attr) {
  static auto real = Real(&ibv_query_device, "ibv_query_device");
  if (!IsModel(context)) return real(context, attr);
  ibv_device_attr_ex ex;
  const int err = qptwin::exec::QueryDeviceExOp(context, nullptr, &ex, sizeof(ex));
  if (!err) *attr = ex.orig_attr;
  return err;
}

#undef ibv_query_port
// The compat entry point (verbs.h's ibv_query_port macro uses the context's query_port op).
int ibv_query_port(ibv_context* context, uint8_t port, struct _compat_ibv_port_attr* attr) {
  static auto real = Real(&ibv_query_port, "ibv_query_port");
  if (!IsModel(context)) return real(context, port, attr);
  ibv_port_attr a;
  const int err = qptwin::exec::QueryPortOp(context, port, &a, sizeof(a));
  if (!err) std::memcpy(attr, &a, offsetof(ibv_port_attr, flags));
  return err;
}

int ibv_query_gid(ibv_context* context, uint8_t port, int index, ibv_gid* gid) {
  static auto real = Real(&ibv_query_gid, "ibv_query_gid");
  if (!IsModel(context)) return real(context, port, index, gid);
  int err = 0;
  ibv_gid_entry e{};
  Preload::Get().Run([&] { err = QueryGidEntry(Ctx(context), port, index, &e); });
  if (err == ENODATA) {  // an empty entry reads as zero (sysfs)
    std::memset(gid, 0, sizeof(*gid));
    return 0;
  }
  if (err) return -1;  // verbs.c: -1 when the sysfs file cannot be read
  *gid = e.gid;
  return 0;
}

int _ibv_query_gid_ex(ibv_context* context, uint32_t port, uint32_t index, ibv_gid_entry* entry,
                      uint32_t flags, size_t entry_size) {
  static auto real = Real(&_ibv_query_gid_ex, "_ibv_query_gid_ex", "IBVERBS_1.11");
  if (!IsModel(context)) return real(context, port, index, entry, flags, entry_size);
  if (flags != 0) return EINVAL;
  int err = 0;
  ibv_gid_entry e{};
  Preload::Get().Run([&] { err = QueryGidEntry(Ctx(context), port, index, &e); });
  if (!err) std::memcpy(entry, &e, std::min(entry_size, sizeof(e)));
  return err;
}

ssize_t _ibv_query_gid_table(ibv_context* context, ibv_gid_entry* entries, size_t max_entries,
                             uint32_t flags, size_t entry_size) {
  static auto real = Real(&_ibv_query_gid_table, "_ibv_query_gid_table", "IBVERBS_1.11");
  if (!IsModel(context)) return real(context, entries, max_entries, flags, entry_size);
  if (flags != 0 || entry_size < sizeof(ibv_gid_entry)) return -EINVAL;
  ssize_t n = 0;
  Preload::Get().Run([&] {
    ModelContext* m = Ctx(context);
    qptwin::PortAttr pa;
    if (m->dev->QueryPort(1, &pa) != 0) return;
    for (int i = 0; i < pa.gid_tbl_len; ++i) {
      ibv_gid_entry e;
      if (QueryGidEntry(m, 1, i, &e) != 0) continue;
      if (static_cast<size_t>(n) >= max_entries) {
        n = -EINVAL;  // the table does not fit (pyverbs test_query_gid_table_bad_flow, rxe)
        return;
      }
      std::memcpy(reinterpret_cast<char*>(entries) + n * entry_size, &e, sizeof(e));
      ++n;
    }
  });
  return n;
}

// IBVERBS_PRIVATE (driver.h): 0 = IBV_GID_TYPE_SYSFS_IB_ROCE_V1, 1 = ..._ROCE_V2.
int ibv_query_gid_type(ibv_context* context, uint8_t port, unsigned int index, int* type) {
  using Fn = int (*)(ibv_context*, uint8_t, unsigned int, int*);
  static auto real = reinterpret_cast<Fn>(
      qptwin::exec::RealSymbol("ibv_query_gid_type", "IBVERBS_PRIVATE_34"));
  if (!IsModel(context)) return real(context, port, index, type);
  int err = 0;
  ibv_gid_entry e{};
  Preload::Get().Run([&] { err = QueryGidEntry(Ctx(context), port, index, &e); });
  if (err && err != ENODATA) return -1;
  *type = e.gid_type == IBV_GID_TYPE_ROCE_V2 ? 1 : 0;
  return 0;
}

int ibv_query_pkey(ibv_context* context, uint8_t port, int index, __be16* pkey) {
  static auto real = Real(&ibv_query_pkey, "ibv_query_pkey");
  if (!IsModel(context)) return real(context, port, index, pkey);
  int err = 0;
  qptwin::PortAttr pa;
  Preload::Get().Run([&] { err = Ctx(context)->dev->QueryPort(port, &pa); });
  if (err || index < 0 || index >= pa.pkey_tbl_len) return -1;
  *pkey = htons(index == 0 ? 0xffff : 0);  // the default P_Key; the rest of the table empty
  return 0;
}

int ibv_get_pkey_index(ibv_context* context, uint8_t port, __be16 pkey) {
  static auto real = Real(&ibv_get_pkey_index, "ibv_get_pkey_index", "IBVERBS_1.5");
  if (!IsModel(context)) return real(context, port, pkey);
  for (int i = 0;; ++i) {
    __be16 p;
    if (ibv_query_pkey(context, port, i, &p) != 0) return -1;
    if (p == pkey) return i;
  }
}

}  // extern "C"
