// flash::Error: the one exception type the library throws.
#pragma once

#include <stdexcept>
#include <string>

namespace flash {

// Every invalid call and every CUDA failure surfaces as a flash::Error whose
// message names the argument at fault and what was expected. A call that
// throws during validation has launched nothing and written nothing.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace flash
