//! One rank's part of a multi-process test job: its MPI communicator and the record of its
//! checks. Each job binary adds its own ways of running a solver.

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

    /// The process's exit status: failure if any check failed on this rank.
    pub fn exit_code(&self) -> ExitCode {
        self.checks.exit_code(self.rank())
    }
}
