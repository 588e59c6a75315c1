//! One rank's part of a multi-process test job: its MPI communicator and the record of its
//! checks. Each job binary adds its own ways of running a solver (the ones both make are in
//! `mpi_runs`).

use std::process::ExitCode;

use groute_dist::{MpiComm, RankComm};

use super::Checks;

/// This rank's communicator and checks.
pub struct Job {
    /// The job's communicator.
    pub comm: MpiComm,
    checks: Checks,
}

impl Job {
    /// This rank's part of the MPI job the process was started in.
    pub fn init() -> Job {
        Job {
            comm: MpiComm::init().expect("MPI"),
            checks: Checks::default(),
        }
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.comm.rank()
    }

    /// The ranks of the job.
    pub fn size(&self) -> usize {
        self.comm.size()
    }

    /// Records the check `what` on this rank (rank 0 prints it).
    pub fn check(&mut self, what: String, ok: bool) {
        let rank = self.rank();
        self.checks.check(rank, what, ok);
    }

    /// Records the check `what` of a run's outcome `out`: the run ended well on this rank and
    /// its output passes `right` (an error is printed, naming this rank).
    pub fn check_outcome<T, E: std::fmt::Display>(
        &mut self,
        what: String,
        out: Result<T, E>,
        right: impl FnOnce(T) -> bool,
    ) {
        let ok = match out {
            Ok(output) => right(output),
            Err(e) => {
                eprintln!("rank {}: {what}: {e}", self.rank());
                false
            }
        };
        self.check(what, ok);
    }

    /// The process's exit status: failure if any check failed on this rank.
    pub fn exit_code(&self) -> ExitCode {
        self.checks.exit_code(self.rank())
    }
}
