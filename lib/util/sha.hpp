#pragma once
// SHA-1 (git's blob ids) and SHA-256 (the seal's HMAC), one 64-byte block
// step computed with the CPU's SHA instructions where it has them (x86-64's
// SHA extensions), else with mbedTLS's block functions. The buffering and
// the padding around the step are the same for both, so the digests are
// too (tests/unit/test_sha.cpp holds both to mbedTLS's own hashes on random
// input, and to published vectors). A changeset's approve and rollback hash
// megabytes and seal hundreds of kilobytes: the instructions hash SHA-1
// about twice and SHA-256 about four times as fast as mbedTLS's code.
//
// Usage: Sha1 h; h.update(a); h.update(b); auto digest = h.finish();
//        auto mac = hmac_sha256(key, message);

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kai {

// Which block step: `best` is the CPU's instructions when it has them,
// `portable` is mbedTLS's always (the tests compare the two).
enum class ShaEngine { best, portable };

// Whether `best` uses the CPU's SHA instructions on this machine.
bool sha_instructions();

template <size_t Words>
class ShaState {
public:
  void update(std::string_view bytes);

protected:
  using Blocks = void (*)(uint32_t* state, const unsigned char* data, size_t blocks);
  ShaState(const std::array<uint32_t, Words>& initial, Blocks blocks) : m_state(initial), m_blocks(blocks) {}
  // The padded last block(s) hashed in; the state words, big-endian.
  std::array<unsigned char, Words * 4> finish();

private:
  std::array<uint32_t, Words> m_state;
  Blocks m_blocks;
  std::array<unsigned char, 64> m_buffer{};
  size_t m_used = 0;     // bytes waiting in m_buffer
  uint64_t m_total = 0;  // bytes hashed in all
};

class Sha1 : public ShaState<5> {
public:
  explicit Sha1(ShaEngine engine = ShaEngine::best);
  std::array<unsigned char, 20> finish() { return ShaState<5>::finish(); }
};

class Sha256 : public ShaState<8> {
public:
  explicit Sha256(ShaEngine engine = ShaEngine::best);
  std::array<unsigned char, 32> finish() { return ShaState<8>::finish(); }
};

// HMAC-SHA-256 (RFC 2104) of `message` under `key`.
std::array<unsigned char, 32> hmac_sha256(std::string_view key, std::string_view message,
                                          ShaEngine engine = ShaEngine::best);

}  // namespace kai
