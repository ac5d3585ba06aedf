#include <catch2/catch.hpp>

#include <random>
#include <string>

#include <mbedtls/md.h>
#include <mbedtls/sha1.h>
#include <mbedtls/sha256.h>

#include "lib/util/git.hpp"
#include "lib/util/sha.hpp"
#include "lib/util/strings.hpp"

namespace {

using kai::ShaEngine;

template <typename A>
std::string hex(const A& a) {
  return kai::lower_hex(std::string_view(reinterpret_cast<const char*>(a.data()), a.size()));
}

template <typename H>
std::string hash_of(std::string_view s, ShaEngine e) {
  H h(e);
  h.update(s);
  return hex(h.finish());
}

std::string mbedtls_sha1_of(std::string_view s) {
  std::array<unsigned char, 20> out{};
  (void)mbedtls_sha1_ret(reinterpret_cast<const unsigned char*>(s.data()), s.size(), out.data());
  return hex(out);
}

std::string mbedtls_sha256_of(std::string_view s) {
  std::array<unsigned char, 32> out{};
  (void)mbedtls_sha256_ret(reinterpret_cast<const unsigned char*>(s.data()), s.size(), out.data(), 0);
  return hex(out);
}

std::string mbedtls_hmac_of(std::string_view key, std::string_view s) {
  std::array<unsigned char, 32> out{};
  (void)mbedtls_md_hmac(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), reinterpret_cast<const unsigned char*>(key.data()),
                        key.size(), reinterpret_cast<const unsigned char*>(s.data()), s.size(), out.data());
  return hex(out);
}

std::string random_bytes(std::mt19937& rng, size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

const ShaEngine k_engines[] = {ShaEngine::best, ShaEngine::portable};

}  // namespace

TEST_CASE("SHA-1 and SHA-256 give the published digests with either engine", "[sha]") {
  const std::string million(1000000, 'a');
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  if (!kai::sha_instructions()) WARN("this CPU has no SHA instructions: both engines are mbedTLS's here");
  for (ShaEngine e : k_engines) {
    INFO((e == ShaEngine::best ? "best" : "portable"));
    CHECK(hash_of<kai::Sha1>("", e) == "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    CHECK(hash_of<kai::Sha1>("abc", e) == "a9993e364706816aba3e25717850c26c9cd0d89d");
    CHECK(hash_of<kai::Sha1>(two_blocks, e) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    CHECK(hash_of<kai::Sha1>(million, e) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    CHECK(hash_of<kai::Sha256>("", e) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(hash_of<kai::Sha256>("abc", e) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(hash_of<kai::Sha256>(two_blocks, e) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    CHECK(hash_of<kai::Sha256>(million, e) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    // RFC 4231, test cases 1, 2 and 6 (a key longer than a block).
    CHECK(hex(kai::hmac_sha256(std::string(20, '\x0b'), "Hi There", e)) ==
          "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    CHECK(hex(kai::hmac_sha256("Jefe", "what do ya want for nothing?", e)) ==
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    CHECK(hex(kai::hmac_sha256(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First", e)) ==
          "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  }
  // git's own id of "hello\n" (git hash-object).
  CHECK(kai::blob_id("hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a");
}

TEST_CASE("SHA-1, SHA-256 and HMAC agree with mbedTLS's on random input, fed in random pieces", "[sha]") {
  std::mt19937 rng(20261207);
  // Every length around the block and padding edges, then larger ones.
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 300; ++n) sizes.push_back(n);
  for (size_t n : {1000u, 4095u, 4096u, 4097u, 65536u, 100003u}) sizes.push_back(n);
  for (size_t n : sizes) {
    const std::string data = random_bytes(rng, n);
    const std::string want1 = mbedtls_sha1_of(data), want256 = mbedtls_sha256_of(data);
    const std::string key = random_bytes(rng, rng() % 150);
    const std::string want_mac = mbedtls_hmac_of(key, data);
    for (ShaEngine e : k_engines) {
      INFO("size " << n << (e == ShaEngine::best ? " best" : " portable"));
      kai::Sha1 h1(e);
      kai::Sha256 h256(e);
      for (size_t at = 0; at < n;) {
        const size_t piece = std::min<size_t>(n - at, rng() % 130);
        h1.update(std::string_view(data).substr(at, piece));
        h256.update(std::string_view(data).substr(at, piece));
        at += piece;
      }
      CHECK(hex(h1.finish()) == want1);
      CHECK(hex(h256.finish()) == want256);
      CHECK(hex(kai::hmac_sha256(key, data, e)) == want_mac);
    }
  }
}
