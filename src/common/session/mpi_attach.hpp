// The tool's side of the hand-over with the PMPI layer (mpi_bridge.hpp): found at tool start when
// libkob_mpi_<family>.so is preloaded; nothing happens when it is not.
#pragma once

namespace kob::mpi_attach {

// Looks the layer up in the global scope and hands it the tool's table. True when attached.
// Called once, from session start (the layer may hand the start offsets over before it returns).
bool attach();

}  // namespace kob::mpi_attach
