// SPDX-License-Identifier: Apache-2.0
// Deprecated: the gate policies are in leap/gate_policies.hpp (a name that does not differ from
// leap/gate.hpp by one letter). This forwarding header goes in 0.3.
#pragma once

#include "leap/gate_policies.hpp"
