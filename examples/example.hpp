// examples/example.hpp -- what the examples share, so that each one shows only its own
// problem: the command line (an input file, or --generate N), reading the input file,
// printing a few values, and, where an example is compiled as CUDA, arrays in device
// memory copied from and back to std::vector.
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

namespace example {

// `program FILE` reads FILE; `program --generate N` makes an input of size N.
struct arguments {
  std::string file;
  std::int64_t generate = 0;
};

inline arguments parse(int argc, char** argv) {
  if (argc == 2 && argv[1][0] != '-') return {argv[1], 0};
  if (argc == 3 && std::string(argv[1]) == "--generate" && std::stoll(argv[2]) > 0) {
    return {"", std::stoll(argv[2])};
  }
  throw std::invalid_argument(std::string("usage: ") + argv[0] + " FILE | --generate N (N > 0)");
}

// The lines of a file, leaving out empty lines and comments (lines that start with '#').
inline std::vector<std::string> read_lines(const std::string& path, std::size_t at_least) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") != std::string::npos && line[0] != '#') {
      lines.push_back(line);
    }
  }
  if (lines.size() < at_least) {
    throw std::runtime_error(path + ": expected " + std::to_string(at_least) + " lines of data");
  }
  return lines;
}

// The numbers on one line.
template <class T>
std::vector<T> numbers(const std::string& line) {
  std::istringstream in(line);
  std::vector<T> values;
  for (T x; in >> x;) values.push_back(x);
  return values;
}

// "label: v0 v1 ...", every value of a short array, the first and last few of a long one.
template <class T>
void print(const char* label, const std::vector<T>& values) {
  std::cout << label << ':';
  const std::size_t n = values.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (n > 12 && i == 6) {
      std::cout << " ...";
      i = n - 3;
    }
    std::cout << ' ' << values[i];
  }
  std::cout << (n > 12 ? " (" + std::to_string(n) + " values)\n" : "\n");
}

// The outcome of checking the answer against a plain sequential computation, and the
// program's exit status.
inline int report(bool agrees, const char* reference = "a sequential loop") {
  std::cout << "check: " << (agrees ? "" : "FAILED, ") << reference
            << (agrees ? " agrees\n" : " disagrees\n");
  return agrees ? 0 : 1;
}

#if defined(__CUDACC__)
// An array in device memory: filled from a std::vector (or left unset), and copied back.
template <class T>
class device_array {
 public:
  explicit device_array(std::size_t n) : size_(n) { check(cudaMalloc(&data_, n * sizeof(T))); }
  explicit device_array(const std::vector<T>& host) : device_array(host.size()) {
    check(cudaMemcpy(data_, host.data(), size_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~device_array() { cudaFree(data_); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;

  T* data() const { return data_; }
  // cudaMemcpy waits for the work queued before it (tally's calls run on the default
  // stream here), so the copy holds the result.
  std::vector<T> to_host() const {
    std::vector<T> host(size_);
    check(cudaMemcpy(host.data(), data_, size_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  static void check(cudaError_t status) {
    if (status != cudaSuccess) throw std::runtime_error(cudaGetErrorString(status));
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
};
#endif

}  // namespace example
