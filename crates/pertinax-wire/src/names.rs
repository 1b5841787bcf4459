//! The job's name table (`MPI_Publish_name`, `MPI_Unpublish_name`,
//! `MPI_Lookup_name`): service name → port name. The launcher keeps one
//! per job, shared by the ranks, the spares and every spawned process; a
//! singleton (no launcher) keeps its own.
//!
//! MPI's rules: publishing a service already published is refused (until
//! it is unpublished), as is unpublishing a service that is not published
//! for that port; looking up an unknown service finds nothing. Anyone may
//! unpublish a name, not only its publisher. A name outlives the process
//! that published it (MPI says nothing): a lookup still finds a dead
//! rank's port, and connecting to it fails as connecting to a dead process
//! does.

use std::collections::BTreeMap;

use crate::ctrl::NameAnswer;

/// Service name → port name.
#[derive(Debug, Default)]
pub struct Names {
    table: BTreeMap<String, String>,
}

impl Names {
    /// Publishes `service` as `port`, unless it is published already.
    pub fn publish(&mut self, service: String, port: String) -> NameAnswer {
        match self.table.get(&service) {
            Some(p) => NameAnswer::AlreadyPublished(p.clone()),
            None => {
                self.table.insert(service, port);
                NameAnswer::Done
            }
        }
    }

    /// Unpublishes `service` if it is published as `port`.
    pub fn unpublish(&mut self, service: &str, port: &str) -> NameAnswer {
        match self.table.get(service) {
            Some(p) if p == port => {
                self.table.remove(service);
                NameAnswer::Done
            }
            other => NameAnswer::NotPublished(other.cloned()),
        }
    }

    /// The port `service` is published as.
    pub fn lookup(&self, service: &str) -> NameAnswer {
        self.table
            .get(service)
            .map_or(NameAnswer::NotFound, |p| NameAnswer::Port(p.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publish_lookup_unpublish_follow_mpi() {
        let mut n = Names::default();
        assert_eq!(n.lookup("svc"), NameAnswer::NotFound);
        assert_eq!(n.publish("svc".into(), "p0".into()), NameAnswer::Done);
        assert_eq!(n.lookup("svc"), NameAnswer::Port("p0".into()));
        assert_eq!(
            n.publish("svc".into(), "p1".into()),
            NameAnswer::AlreadyPublished("p0".into())
        );
        assert_eq!(
            n.unpublish("svc", "p1"),
            NameAnswer::NotPublished(Some("p0".into()))
        );
        assert_eq!(n.unpublish("svc", "p0"), NameAnswer::Done);
        assert_eq!(n.unpublish("svc", "p0"), NameAnswer::NotPublished(None));
        assert_eq!(n.lookup("svc"), NameAnswer::NotFound);
        assert_eq!(n.publish("svc".into(), "p1".into()), NameAnswer::Done);
    }
}
