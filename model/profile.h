// Device profiles: a device description of spec/device_description.h (what the device reports
// and how it behaves) plus the timing of a modelled NIC, as data.
//
// Contract:
//  1. A profile is plain data; the engine reads it and never branches on the profile name.
//     device, port and behaviour are copied from the profile's DeviceDescription: a
//     behaviour difference is made there, never here.
//  2. FindProfile() returns nullptr for an unknown name; names compare case-insensitively.
//  3. Timing (timing.h) says what every step of a message costs; wire.h computes the
//     packets and their bytes on the wire. Every timing number carries its source in
//     profile.cc / profile_cx6.cc, or says that it is an estimate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "spec/backend.h"
#include "spec/device_description.h"
#include "spec/vocabulary.h"
#include "model/timing.h"
#include "model/wire.h"

namespace qptwin::model {

struct Profile {
  std::string name;
  std::string description;
  std::string device_name;  // the spec/device_description.h description it models
  DeviceAttr device;  // name is filled in per device
  PortAttr port;
  Behaviour behaviour;
  Timing timing;
};

const Profile* FindProfile(const std::string& name);
std::vector<std::string> KnownProfileNames();

// A profile named `name` of the description `device` (which must exist), without timing.
Profile ProfileOf(const std::string& name, const std::string& description,
                  const std::string& device);

// The ConnectX-6-like profiles (profile_cx6.cc).
Profile MakeCx6Profile();    // "cx6-100g": two 100 GbE NICs back to back
Profile MakeCx6DcProfile();  // "cx6-dc": the same NICs three switch hops apart
// The cx6 profiles' context caches (timing.h contract 5), estimates documented there.
CacheTiming Cx6ContextCaches();

}  // namespace qptwin::model
