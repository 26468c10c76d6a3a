# CMake before 3.26 does not know nvcc's C++20 flag, so CUDA_STANDARD 20 (which the
# cxx_std_20 compile feature of tally::tally also asks of CUDA sources) fails at generation
# there. Included by tally's CMakeLists.txt and by the installed tallyConfig.cmake, so that
# a consumer on such a CMake compiles its CUDA sources against tally::tally too.
if(CMAKE_VERSION VERSION_LESS 3.26 AND NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()
