#pragma once
// One updating line on stderr for long work, drawn only when stderr is a
// terminal, throttled (see ProgressThrottle) and cleared when the work ends
// or the object goes away.
//
//   ProgressLine line;
//   in.progress = line.callback();  // hand it to lib/
//   run_doctor(in);                 // the line is gone before results print

#include "lib/util/progress.hpp"

namespace kai::cmd {

class ProgressLine {
public:
  ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine();

  // Valid while this object lives; empty when stderr is not a terminal.
  Progress callback();

private:
  void update(std::string_view what, size_t done, size_t total);
  void clear();
  bool m_on = false, m_drawn = false;
  ProgressThrottle m_throttle;
};

}  // namespace kai::cmd
