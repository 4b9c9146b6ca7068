//! tack-restate through real processes: a Restate server, tack endpoint
//! processes, sessions driven by scripted models.

mod approval;
mod balance;
mod crash;
mod fixture;
mod identity;
mod restate;
mod scene;
