//! The measurements grouped for tables and plots: per algorithm, per graph (and machine),
//! one point per device count, with the speedup over the one-device run.

use std::collections::BTreeMap;

use crate::record::Measurement;

/// One line of a scaling table or plot: one graph on one machine.
#[derive(Clone, Debug)]
pub struct Series {
    /// The graph spec.
    pub graph: String,
    /// `backend` and GPU model, e.g. `cuda, NVIDIA H200`.
    pub machine: String,
    /// Measurements by device count (the last read wins when one is repeated).
    pub points: BTreeMap<usize, Measurement>,
}

impl Series {
    /// Time on one device over time on `devices` (`None` without a one-device run of the
    /// same commit: runs of two builds compare the builds as much as the device counts).
    pub fn speedup(&self, devices: usize) -> Option<f64> {
        let one = self.points.get(&1)?;
        let here = self.points.get(&devices)?;
        (one.commit == here.commit).then(|| one.median_ms / here.median_ms)
    }

    /// [`Series::speedup`] as a table cell: `1.60x`, or `-` without a one-device run of the
    /// same commit.
    pub fn speedup_text(&self, devices: usize) -> String {
        self.speedup(devices)
            .map(|x| format!("{x:.2}x"))
            .unwrap_or_else(|| "-".into())
    }
}

/// The series of `algorithm`, ordered by graph (first seen first) then machine.
pub fn series_of(records: &[Measurement], algorithm: &str) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for m in records.iter().filter(|m| m.algorithm == algorithm) {
        let machine = format!("{}, {}", m.backend, m.gpu);
        let i = match out
            .iter()
            .position(|s| s.graph == m.graph && s.machine == machine)
        {
            Some(i) => i,
            None => {
                out.push(Series {
                    graph: m.graph.clone(),
                    machine,
                    points: BTreeMap::new(),
                });
                out.len() - 1
            }
        };
        out[i].points.insert(m.devices, m.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::sample;

    #[test]
    fn groups_by_graph_and_computes_speedup_over_one_device() {
        let records = vec![
            sample("bfs", "kron21.sym", 1, 10.0),
            sample("bfs", "kron21.sym", 2, 4.0),
            sample("bfs", "road:side=2048,p=0.6", 2, 50.0),
            sample("cc", "kron21.sym", 1, 3.0),
            // A repeated measurement replaces the earlier one.
            sample("bfs", "kron21.sym", 2, 5.0),
        ];
        let s = series_of(&records, "bfs");
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].graph, "kron21.sym");
        assert_eq!(s[0].speedup(2), Some(2.0));
        assert_eq!(s[1].speedup(2), None, "no one-device run of the road graph");
    }

    #[test]
    fn runs_of_two_builds_have_no_speedup() {
        let mut newer = sample("pagerank", "kron21.sym", 1, 8.0);
        newer.commit = "def5678".into();
        let records = vec![sample("pagerank", "kron21.sym", 2, 9.0), newer];
        let s = series_of(&records, "pagerank");
        assert_eq!(s[0].speedup(2), None);
        assert_eq!(s[0].speedup_text(2), "-");
        assert_eq!(s[0].speedup(1), Some(1.0));
    }
}
