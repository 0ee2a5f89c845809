// Small pieces every policy command of the engine uses (engine_commands.cpp,
// engine_dispatch.cpp, engine_serving.cpp): how a job is named in a refusal, and the part of
// an op every command states.
//
// Internal to gpumux_engine. Thread rules: none (pure).
#pragma once

#include <string>

#include "gpumux/api/job_spec.hpp"
#include "gpumux/api/op.hpp"

namespace gpumux {

inline std::string job_label(const JobSpec& spec) {
  return "'" + spec.name + "'";
}

/// The part of an op every command states: whose, where, which kind and what for.
inline OpSpec op_spec(JobId job, DeviceId device, StreamId stream, OpKind kind, OpPurpose purpose) {
  OpSpec spec;
  spec.job = job;
  spec.device = device;
  spec.stream = stream;
  spec.kind = kind;
  spec.purpose = purpose;
  return spec;
}

}  // namespace gpumux
