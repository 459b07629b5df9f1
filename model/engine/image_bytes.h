// Fields of the images the engine keeps in host memory (cq.h's CQEs, send_wqe_image.h's
// WQEs): a value at a byte offset, in the host's byte order (little-endian on every machine
// the model runs on, as the layouts say).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace qptwin::model::engine::image {

template <typename T>
void Put(uint8_t* image, size_t at, T v) {
  std::memcpy(image + at, &v, sizeof v);
}

template <typename T>
T Get(const uint8_t* image, size_t at) {
  T v;
  std::memcpy(&v, image + at, sizeof v);
  return v;
}

}  // namespace qptwin::model::engine::image
