// A model Device that refuses to be used off the SystemC kernel's thread (spec/backend.h,
// contract 5; model/sim/kernel.h, contract 4): every call checks the thread first and
// returns EPERM (PollCq: -EPERM; AckCqEvents: nothing; TakeAsyncEvents: none) without
// touching the device. Name() is a constant and answers anywhere. A Device destroyed on
// another thread is leaked, not released (see the destructor). Each call holds a
// sim::ModelCall (model/sim/kernel.h contract 7): in a program's own simulation the
// threads making calls take turns, and the waits let the others in.
//
// Every Device method is forwarded here: a method added to spec/backend.h needs its line.
#pragma once

#include <memory>

#include "spec/backend.h"

namespace qptwin::model {

std::unique_ptr<Device> CheckThread(std::unique_ptr<Device> device);
// The device CheckThread wrapped (`device` itself when it is no such wrapper), for the
// model-only calls of model_backend.h, which take their own sim::ModelCall.
Device* Unchecked(Device* device);

}  // namespace qptwin::model
