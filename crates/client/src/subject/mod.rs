//! Another program's Spanner client under the microscope (`spanprof client`): its command line and
//! one run of it (`command`), and the rows it printed checked against the rows the server sent
//! (`check`).

pub mod check;
pub mod command;
