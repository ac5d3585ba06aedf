#include "lib/util/sha.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include <mbedtls/sha1.h>
#include <mbedtls/sha256.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#define KAI_SHA_X86 1
#endif

namespace kai {

namespace {

constexpr std::array<uint32_t, 5> k_sha1_initial = {0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u};
constexpr std::array<uint32_t, 8> k_sha256_initial = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
                                                      0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};

// mbedTLS's block step, over a context of its own that holds only the state.
template <typename Ctx, void (*Init)(Ctx*), void (*Free)(Ctx*), int (*Process)(Ctx*, const unsigned char*)>
void blocks_portable(uint32_t* state, const unsigned char* data, size_t blocks) {
  Ctx c;
  Init(&c);
  std::memcpy(c.state, state, sizeof c.state);
  for (size_t i = 0; i < blocks; ++i) (void)Process(&c, data + 64 * i);
  std::memcpy(state, c.state, sizeof c.state);
  Free(&c);
}
constexpr auto sha1_blocks_portable =
    blocks_portable<mbedtls_sha1_context, mbedtls_sha1_init, mbedtls_sha1_free, mbedtls_internal_sha1_process>;
constexpr auto sha256_blocks_portable = blocks_portable<mbedtls_sha256_context, mbedtls_sha256_init,
                                                        mbedtls_sha256_free, mbedtls_internal_sha256_process>;

#ifdef KAI_SHA_X86

#define KAI_SHA_TARGET __attribute__((target("sha,sse4.1,ssse3")))

// Asked of the CPU once, three questions (each a trip to the hypervisor
// on a virtual machine: microseconds). glibc knows it too, but its header
// for that is C only.
bool cpu_has_sha() {
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  unsigned a = 0, b = 0, c = 0, d = 0;
  __cpuid(1, a, b, c, d);
  const bool ssse3 = (c & (1u << 9)) != 0, sse41 = (c & (1u << 19)) != 0;
  __cpuid_count(7, 0, a, b, c, d);
  return ssse3 && sse41 && (b & (1u << 29)) != 0;
}

// SHA-1 with the SHA extensions, four rounds an instruction. Message words
// in groups of four, W[i] for rounds 4i..4i+3, in a ring of four:
// W[i] = sha1msg2(sha1msg1(W[i-4], W[i-3]) ^ W[i-2], W[i-1]). The E input
// of a group is E + W[0] for the first, and sha1nexte(ABCD as it was before
// the group before, W[i]) after.
template <size_t I>
KAI_SHA_TARGET inline __attribute__((always_inline)) void sha1_group(__m128i (&w)[4], __m128i& abcd, __m128i& prev,
                                                                   __m128i e0, const unsigned char* data,
                                                                   __m128i swap) {
  if constexpr (I < 4) {
    w[I] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * I)), swap);
  } else {
    w[I % 4] = _mm_sha1msg2_epu32(
        _mm_xor_si128(_mm_sha1msg1_epu32(w[I % 4], w[(I + 1) % 4]), w[(I + 2) % 4]), w[(I + 3) % 4]);
  }
  const __m128i e = I == 0 ? _mm_add_epi32(e0, w[0]) : _mm_sha1nexte_epu32(prev, w[I % 4]);
  prev = abcd;
  abcd = _mm_sha1rnds4_epu32(abcd, e, static_cast<int>(I / 5));
}

template <size_t... I>
KAI_SHA_TARGET inline __attribute__((always_inline)) void sha1_groups(std::index_sequence<I...>, __m128i (&w)[4],
                                                                    __m128i& abcd, __m128i& prev, __m128i e0,
                                                                    const unsigned char* data, __m128i swap) {
  (sha1_group<I>(w, abcd, prev, e0, data, swap), ...);
}

KAI_SHA_TARGET void sha1_blocks_x86(uint32_t* state, const unsigned char* data, size_t blocks) {
  // Reverses the 16 bytes: each word big-endian, and the words in the
  // order the instructions take them.
  const __m128i swap = _mm_set_epi64x(0x0001020304050607LL, 0x08090a0b0c0d0e0fLL);
  __m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state)), 0x1B);
  __m128i e0 = _mm_set_epi32(static_cast<int>(state[4]), 0, 0, 0);
  for (; blocks > 0; --blocks, data += 64) {
    const __m128i abcd_was = abcd, e_was = e0;
    __m128i w[4];
    __m128i prev = abcd;
    sha1_groups(std::make_index_sequence<20>{}, w, abcd, prev, e0, data, swap);
    e0 = _mm_sha1nexte_epu32(prev, e_was);
    abcd = _mm_add_epi32(abcd, abcd_was);
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), _mm_shuffle_epi32(abcd, 0x1B));
  state[4] = static_cast<uint32_t>(_mm_extract_epi32(e0, 3));
}

alignas(16) constexpr uint32_t k_sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// SHA-256 with the SHA extensions, two rounds an instruction, the state as
// ABEF and CDGH. Message words in groups of four, in a ring of four:
// W[i] = sha256msg2(sha256msg1(W[i-4], W[i-3]) + W[i-1]:W[i-2] shifted by
// a word, W[i-1]).
template <size_t I>
KAI_SHA_TARGET inline __attribute__((always_inline)) void sha256_group(__m128i (&w)[4], __m128i& abef, __m128i& cdgh,
                                                                     const unsigned char* data, __m128i swap) {
  if constexpr (I < 4) {
    w[I] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * I)), swap);
  } else {
    w[I % 4] = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(w[I % 4], w[(I + 1) % 4]),
                                                  _mm_alignr_epi8(w[(I + 3) % 4], w[(I + 2) % 4], 4)),
                                    w[(I + 3) % 4]);
  }
  __m128i msg = _mm_add_epi32(w[I % 4], _mm_load_si128(reinterpret_cast<const __m128i*>(k_sha256_k + 4 * I)));
  cdgh = _mm_sha256rnds2_epu32(cdgh, abef, msg);
  msg = _mm_shuffle_epi32(msg, 0x0E);
  abef = _mm_sha256rnds2_epu32(abef, cdgh, msg);
}

template <size_t... I>
KAI_SHA_TARGET inline __attribute__((always_inline)) void sha256_groups(std::index_sequence<I...>, __m128i (&w)[4],
                                                                      __m128i& abef, __m128i& cdgh,
                                                                      const unsigned char* data, __m128i swap) {
  (sha256_group<I>(w, abef, cdgh, data, swap), ...);
}

KAI_SHA_TARGET void sha256_blocks_x86(uint32_t* state, const unsigned char* data, size_t blocks) {
  // Each word big-endian, in place.
  const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  const __m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state)), 0xB1);  // CDAB
  const __m128i efgh = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4)), 0x1B);
  __m128i abef = _mm_alignr_epi8(dcba, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, dcba, 0xF0);
  for (; blocks > 0; --blocks, data += 64) {
    const __m128i abef_was = abef, cdgh_was = cdgh;
    __m128i w[4];
    sha256_groups(std::make_index_sequence<16>{}, w, abef, cdgh, data, swap);
    abef = _mm_add_epi32(abef, abef_was);
    cdgh = _mm_add_epi32(cdgh, cdgh_was);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), _mm_blend_epi16(feba, dchg, 0xF0));  // DCBA
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), _mm_alignr_epi8(dchg, feba, 8));  // HGFE
}

#undef KAI_SHA_TARGET

#endif

using ShaBlocks = void (*)(uint32_t*, const unsigned char*, size_t);

// The block step `engine` asks for: `fast` (the CPU's instructions) where
// the CPU has them, else `portable`.
ShaBlocks blocks_for(ShaEngine engine, ShaBlocks fast, ShaBlocks portable) {
#ifdef KAI_SHA_X86
  static const bool has = cpu_has_sha();
  if (engine == ShaEngine::best && has) return fast;
#else
  (void)engine, (void)fast;
#endif
  return portable;
}

#ifdef KAI_SHA_X86
ShaBlocks sha1_blocks(ShaEngine engine) { return blocks_for(engine, sha1_blocks_x86, sha1_blocks_portable); }
ShaBlocks sha256_blocks(ShaEngine engine) { return blocks_for(engine, sha256_blocks_x86, sha256_blocks_portable); }
#else
ShaBlocks sha1_blocks(ShaEngine engine) { return blocks_for(engine, nullptr, sha1_blocks_portable); }
ShaBlocks sha256_blocks(ShaEngine engine) { return blocks_for(engine, nullptr, sha256_blocks_portable); }
#endif

}  // namespace

bool sha_instructions() { return sha1_blocks(ShaEngine::best) != sha1_blocks_portable; }

template <size_t Words>
void ShaState<Words>::update(std::string_view bytes) {
  auto p = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t n = bytes.size();
  m_total += n;
  if (m_used > 0) {
    const size_t take = std::min(n, m_buffer.size() - m_used);
    std::memcpy(m_buffer.data() + m_used, p, take);
    m_used += take;
    p += take;
    n -= take;
    if (m_used < m_buffer.size()) return;
    m_blocks(m_state.data(), m_buffer.data(), 1);
    m_used = 0;
  }
  if (n >= 64) {
    m_blocks(m_state.data(), p, n / 64);
    p += n / 64 * 64;
    n %= 64;
  }
  if (n > 0) std::memcpy(m_buffer.data(), p, n);
  m_used = n;
}

template <size_t Words>
std::array<unsigned char, Words * 4> ShaState<Words>::finish() {
  // 0x80, zeros up to 8 bytes short of a block, then the length in bits,
  // big-endian.
  const uint64_t bits = m_total * 8;
  m_buffer[m_used++] = 0x80;
  if (m_used > 56) {
    std::fill(m_buffer.begin() + static_cast<ptrdiff_t>(m_used), m_buffer.end(), 0);
    m_blocks(m_state.data(), m_buffer.data(), 1);
    m_used = 0;
  }
  std::fill(m_buffer.begin() + static_cast<ptrdiff_t>(m_used), m_buffer.begin() + 56, 0);
  for (int i = 0; i < 8; ++i) m_buffer[56 + static_cast<size_t>(i)] = static_cast<unsigned char>(bits >> (56 - 8 * i));
  m_blocks(m_state.data(), m_buffer.data(), 1);
  m_used = 0;
  std::array<unsigned char, Words * 4> out{};
  for (size_t i = 0; i < Words; ++i)
    for (size_t j = 0; j < 4; ++j) out[4 * i + j] = static_cast<unsigned char>(m_state[i] >> (24 - 8 * j));
  return out;
}

template class ShaState<5>;
template class ShaState<8>;

Sha1::Sha1(ShaEngine engine) : ShaState<5>(k_sha1_initial, sha1_blocks(engine)) {}
Sha256::Sha256(ShaEngine engine) : ShaState<8>(k_sha256_initial, sha256_blocks(engine)) {}

std::array<unsigned char, 32> hmac_sha256(std::string_view key, std::string_view message, ShaEngine engine) {
  std::array<unsigned char, 64> k{};
  if (key.size() > k.size()) {
    Sha256 h(engine);
    h.update(key);
    const auto d = h.finish();
    std::copy(d.begin(), d.end(), k.begin());
  } else {
    std::memcpy(k.data(), key.data(), key.size());
  }
  std::array<unsigned char, 64> pad{};
  for (size_t i = 0; i < k.size(); ++i) pad[i] = static_cast<unsigned char>(k[i] ^ 0x36);
  Sha256 inner(engine);
  inner.update(std::string_view(reinterpret_cast<const char*>(pad.data()), pad.size()));
  inner.update(message);
  const auto inner_sum = inner.finish();
  for (size_t i = 0; i < k.size(); ++i) pad[i] = static_cast<unsigned char>(k[i] ^ 0x5c);
  Sha256 outer(engine);
  outer.update(std::string_view(reinterpret_cast<const char*>(pad.data()), pad.size()));
  outer.update(std::string_view(reinterpret_cast<const char*>(inner_sum.data()), inner_sum.size()));
  // The key's traces are not left on the stack.
  volatile unsigned char* wipe = pad.data();
  for (size_t i = 0; i < pad.size(); ++i) wipe[i] = 0;
  wipe = k.data();
  for (size_t i = 0; i < k.size(); ++i) wipe[i] = 0;
  return outer.finish();
}

}  // namespace kai
