//! Spanner's resource names, spelled in one place for the targets, the Cloud path and the admin
//! calls.

/// `projects/P/instances/I`.
pub fn instance_name(project: &str, instance: &str) -> String {
    format!("projects/{project}/instances/{instance}")
}

/// `projects/P/instances/I/databases/D`.
pub fn database_name(project: &str, instance: &str, database: &str) -> String {
    format!("{}/databases/{database}", instance_name(project, instance))
}
