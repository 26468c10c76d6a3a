// src/cpu/simd_kernels.cpp -- vectorised scan and reduce tiles for the CPU backend.
//
// Highway compiles this file once per SIMD target (HWY_TARGET_INCLUDE + foreach_target.h)
// and HWY_DYNAMIC_DISPATCH picks the best target of the running CPU on the first call.
//
// The in-register scan is the Hillis-Steele / Kogge-Stone log-step scan across the lanes
// of one vector: log2(lanes) steps of "shift up by k lanes (identity shifted in), combine".
// The running carry of everything before the vector is then combined into every lane,
// and the last lane, broadcast, is the carry for the next vector. The carry chain is one
// combine and one permute per vector, so one core scans faster than it can read memory.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/simd_kernels.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>

#include "tally/core/operators.hpp"
#include "tally/cpu/detail/simd.hpp"

HWY_BEFORE_NAMESPACE();
namespace tally::cpu::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The three vectorised operators: vector form, scalar form (for heads and tails, which
// must give the same results as the vector form), identity and lane reduction.
struct vec_plus {
  template <class V>
  static HWY_INLINE V vec(V a, V b) { return hn::Add(a, b); }
  template <class T>
  static HWY_INLINE T scalar(T a, T b) { return static_cast<T>(a + b); }
  template <class T>
  static constexpr T identity() { return tally::identity<tally::plus, T>(); }
  template <class D, class V>
  static HWY_INLINE V all_lanes(D d, V v) { return hn::SumOfLanes(d, v); }
};
struct vec_minimum {
  template <class V>
  static HWY_INLINE V vec(V a, V b) { return hn::Min(a, b); }
  template <class T>
  static HWY_INLINE T scalar(T a, T b) { return tally::minimum{}(a, b); }
  template <class T>
  static constexpr T identity() { return tally::identity<tally::minimum, T>(); }
  template <class D, class V>
  static HWY_INLINE V all_lanes(D d, V v) { return hn::MinOfLanes(d, v); }
};
struct vec_maximum {
  template <class V>
  static HWY_INLINE V vec(V a, V b) { return hn::Max(a, b); }
  template <class T>
  static HWY_INLINE T scalar(T a, T b) { return tally::maximum{}(a, b); }
  template <class T>
  static constexpr T identity() { return tally::identity<tally::maximum, T>(); }
  template <class D, class V>
  static HWY_INLINE V all_lanes(D d, V v) { return hn::MaxOfLanes(d, v); }
};

// Inclusive scan across the lanes of v (log2(lanes) shift-and-combine steps).
template <class Op, class D, class V = hn::Vec<D>>
HWY_INLINE V scan_lanes(D d, V v) {
  using T = hn::TFromD<D>;
  const hn::RebindToSigned<D> di;
  const auto lane = hn::Iota(di, 0);
  const V id = hn::Set(d, Op::template identity<T>());
  for (std::size_t k = 1; k < hn::Lanes(d); k *= 2) {
    // lane i takes lane i-k; lanes below k take the identity.
    const auto from = hn::Max(hn::Sub(lane, hn::Set(di, static_cast<hn::TFromD<decltype(di)>>(k))),
                              hn::Zero(di));
    const V shifted = hn::IfThenElse(hn::FirstN(d, k), id,
                                     hn::TableLookupLanes(v, hn::IndicesFromVec(d, from)));
    v = Op::vec(shifted, v);
  }
  return v;
}

// Every lane gets lane `src` of v.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V broadcast_lane(D d, V v, std::size_t src) {
  const hn::RebindToSigned<D> di;
  using TI = hn::TFromD<decltype(di)>;
  return hn::TableLookupLanes(v, hn::IndicesFromVec(d, hn::Set(di, static_cast<TI>(src))));
}

// Shift lanes up by one; lane 0 gets `first`.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V shift_up_one(D d, V v, V first) {
  const hn::RebindToSigned<D> di;
  using TI = hn::TFromD<decltype(di)>;
  const auto from = hn::Max(hn::Sub(hn::Iota(di, 0), hn::Set(di, TI{1})), hn::Zero(di));
  return hn::IfThenElse(hn::FirstN(d, 1), first,
                        hn::TableLookupLanes(v, hn::IndicesFromVec(d, from)));
}

template <class D, class V = hn::Vec<D>, class T = hn::TFromD<D>>
HWY_INLINE void store(D d, V v, T* out, bool stream) {
  if (stream) {
    hn::Stream(v, d, out);  // `out` is vector-aligned on this path
  } else {
    hn::StoreU(v, d, out);
  }
}

template <class Op, bool Exclusive, class T>
T scan_impl(const T* in, T* out, std::size_t n, T carry,
            bool stream) {
  const hn::ScalableTag<T> d;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  auto scalar_step = [&](std::size_t j) {
    const T x = in[j];  // read before the write: in place is allowed
    if constexpr (Exclusive) {
      out[j] = carry;
      carry = Op::scalar(carry, x);
    } else {
      carry = Op::scalar(carry, x);
      out[j] = carry;
    }
  };
  if (stream) {
    // Non-temporal stores need a vector-aligned destination: scalar head up to it.
    while (i < n && reinterpret_cast<std::uintptr_t>(out + i) % (lanes * sizeof(T)) != 0) {
      scalar_step(i++);
    }
  }
  auto vcarry = hn::Set(d, carry);
  for (; i + lanes <= n; i += lanes) {
    const auto scanned = scan_lanes<Op>(d, hn::LoadU(d, in + i));
    if constexpr (Exclusive) {
      const auto local = shift_up_one(d, scanned, hn::Set(d, Op::template identity<T>()));
      store(d, Op::vec(vcarry, local), out + i, stream);
      vcarry = Op::vec(vcarry, broadcast_lane(d, scanned, lanes - 1));
    } else {
      const auto total = Op::vec(vcarry, scanned);
      store(d, total, out + i, stream);
      vcarry = broadcast_lane(d, total, lanes - 1);
    }
  }
  carry = hn::GetLane(vcarry);
  for (; i < n; ++i) scalar_step(i);
  return carry;
}

template <class Op, class T>
T reduce_impl(const T* HWY_RESTRICT in, std::size_t n, T carry) {
  const hn::ScalableTag<T> d;
  const std::size_t lanes = hn::Lanes(d);
  // Four independent accumulators hide the latency of the combine.
  auto a0 = hn::Set(d, Op::template identity<T>());
  auto a1 = a0, a2 = a0, a3 = a0;
  std::size_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    a0 = Op::vec(a0, hn::LoadU(d, in + i));
    a1 = Op::vec(a1, hn::LoadU(d, in + i + lanes));
    a2 = Op::vec(a2, hn::LoadU(d, in + i + 2 * lanes));
    a3 = Op::vec(a3, hn::LoadU(d, in + i + 3 * lanes));
  }
  for (; i + lanes <= n; i += lanes) a0 = Op::vec(a0, hn::LoadU(d, in + i));
  const auto all = Op::vec(Op::vec(a0, a1), Op::vec(a2, a3));
  T tail = Op::template identity<T>();
  for (; i < n; ++i) tail = Op::scalar(tail, in[i]);
  return Op::scalar(Op::scalar(carry, hn::GetLane(Op::all_lanes(d, all))), tail);
}

template <bool Exclusive, class T>
T scan_dispatch(int op, const T* in, T* out, std::size_t n, T carry, bool stream) {
  switch (static_cast<simd_op>(op)) {
    case simd_op::plus: return scan_impl<vec_plus, Exclusive>(in, out, n, carry, stream);
    case simd_op::minimum: return scan_impl<vec_minimum, Exclusive>(in, out, n, carry, stream);
    case simd_op::maximum: break;
  }
  return scan_impl<vec_maximum, Exclusive>(in, out, n, carry, stream);
}

template <class T>
T reduce_dispatch(int op, const T* in, std::size_t n, T carry) {
  switch (static_cast<simd_op>(op)) {
    case simd_op::plus: return reduce_impl<vec_plus>(in, n, carry);
    case simd_op::minimum: return reduce_impl<vec_minimum>(in, n, carry);
    case simd_op::maximum: break;
  }
  return reduce_impl<vec_maximum>(in, n, carry);
}

// One exported function per (kind, type): HWY_EXPORT needs plain function names.
#define TALLY_SIMD_KERNELS(T, NAME)                                                      \
  T Inclusive##NAME(int op, const T* in, T* out, std::size_t n, T carry, bool stream) { \
    return scan_dispatch<false>(op, in, out, n, carry, stream);                          \
  }                                                                                      \
  T Exclusive##NAME(int op, const T* in, T* out, std::size_t n, T carry, bool stream) { \
    return scan_dispatch<true>(op, in, out, n, carry, stream);                           \
  }                                                                                      \
  T Reduce##NAME(int op, const T* in, std::size_t n, T carry) {                          \
    return reduce_dispatch(op, in, n, carry);                                            \
  }
TALLY_SIMD_KERNELS(std::int32_t, I32)
TALLY_SIMD_KERNELS(std::uint32_t, U32)
TALLY_SIMD_KERNELS(std::int64_t, I64)
TALLY_SIMD_KERNELS(std::uint64_t, U64)
TALLY_SIMD_KERNELS(float, F32)
TALLY_SIMD_KERNELS(double, F64)
#undef TALLY_SIMD_KERNELS

void FlushStreams() { hwy::FlushStream(); }
const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace tally::cpu::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tally::cpu::detail {

HWY_EXPORT(FlushStreams);
HWY_EXPORT(TargetName);

void simd_flush_streams() { HWY_DYNAMIC_DISPATCH(FlushStreams)(); }
const char* simd_target_name() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

#define TALLY_SIMD_EXPORT(T, NAME)                                                          \
  HWY_EXPORT(Inclusive##NAME);                                                              \
  HWY_EXPORT(Exclusive##NAME);                                                              \
  HWY_EXPORT(Reduce##NAME);                                                                 \
  T simd_inclusive_scan(simd_op op, const T* in, T* out, std::size_t n, T carry,         \
                           bool stream) {                                                   \
    return HWY_DYNAMIC_DISPATCH(Inclusive##NAME)(static_cast<int>(op), in, out, n, carry,   \
                                                 stream);                                   \
  }                                                                                         \
  T simd_exclusive_scan(simd_op op, const T* in, T* out, std::size_t n, T carry,         \
                           bool stream) {                                                   \
    return HWY_DYNAMIC_DISPATCH(Exclusive##NAME)(static_cast<int>(op), in, out, n, carry,   \
                                                 stream);                                   \
  }                                                                                         \
  T simd_reduce(simd_op op, const T* in, std::size_t n, T carry) {                       \
    return HWY_DYNAMIC_DISPATCH(Reduce##NAME)(static_cast<int>(op), in, n, carry);          \
  }
TALLY_SIMD_EXPORT(std::int32_t, I32)
TALLY_SIMD_EXPORT(std::uint32_t, U32)
TALLY_SIMD_EXPORT(std::int64_t, I64)
TALLY_SIMD_EXPORT(std::uint64_t, U64)
TALLY_SIMD_EXPORT(float, F32)
TALLY_SIMD_EXPORT(double, F64)
#undef TALLY_SIMD_EXPORT

}  // namespace tally::cpu::detail
#endif  // HWY_ONCE
