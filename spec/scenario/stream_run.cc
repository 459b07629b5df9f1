#include "spec/scenario/stream_run.h"

#include <vector>

#include "spec/scenario/runner.h"
#include "spec/scenario/transcript.h"

namespace qptwin::scenario {

StreamResult StreamRun(ScenarioStream* stream, const StreamBackendMaker& make,
                       const StreamOptions& options, std::ostream& out,
                       const std::function<void(const std::string&)>& on_failure) {
  StreamResult result;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Runner> runner;
  std::vector<Command> waiting;  // device lines read before the backend exists
  uint64_t end_ns = 0;
  auto run = [&](const Command& c) {
    Step step = runner->Next(c);
    ++result.steps;
    end_ns = step.end_ns;
    result.failures += static_cast<int>(step.failures.size());
    out << (options.canonical ? CanonicalStep(step) : NarratedStep(step, options.explain));
    if (!step.failures.empty()) {
      std::string lines = StepFailures(step);
      for (size_t b = 0, e; b < lines.size(); b = e + 1) {
        e = lines.find('\n', b);
        on_failure(lines.substr(b, e - b));
      }
    }
  };
  auto begin = [&]() {
    backend = make(stream->header());
    if (!backend) return result.backend_ok = false;
    runner = std::make_unique<Runner>(backend.get());
    RunOptions run_options;
    run_options.keep_trace = false;
    run_options.host_ns = options.host_ns;
    runner->Start(run_options);
    if (!options.canonical) {
      out << NarratedHeader(backend->Kind() == "model" ? "simulated" : "real");
    }
    for (const Command& c : waiting) run(c);
    waiting.clear();
    return true;
  };
  Command c;
  while (stream->Next(&c, &result.error)) {
    if (!runner) {
      if (c.verb == Verb::kDevice) {
        waiting.push_back(std::move(c));
        continue;
      }
      if (!begin()) return result;
    }
    run(c);
  }
  result.syntax_ok = !stream->failed();
  if (!runner && (!result.syntax_ok || !begin())) return result;
  runner->Finish();
  if (!options.canonical && result.syntax_ok) {
    out << NarratedFooter(result.steps, result.failures, end_ns);
  }
  return result;
}

}  // namespace qptwin::scenario
