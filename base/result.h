#pragma once
// Result<T> and Error are part of the plugin SDK (sdk/rxerun/result.h): one
// definition for rxerun and the plugins built against it.

#include "rxerun/result.h"
