// How many threads a conversion may keep busy: the cores this process may run on (its CPU
// affinity), shared with the other MPI ranks of its node when the launcher says how many there
// are (Open MPI, MPICH/Hydra, Slurm).
#pragma once

namespace kob {

unsigned idle_cores();

}  // namespace kob
