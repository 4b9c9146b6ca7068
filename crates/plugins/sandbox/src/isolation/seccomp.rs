//! The seccomp filter of the floor: system calls a confined command never
//! needs, refused with `EPERM` (`clone3` with `ENOSYS`, so the C library
//! falls back to `clone`, whose flags the filter can see; Unix sockets with
//! `EAFNOSUPPORT`, which the shell recognizes in a command's output).
//!
//! It is a deny-list on purpose: commands run arbitrary programs, and an
//! allow-list would break them. Each rule below names what it stops.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// What the filter refuses beyond the fixed list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct FilterSpec {
    /// AF_INET and AF_INET6 sockets are allowed.
    pub(crate) network: bool,
    /// `socket(AF_UNIX, …)` is allowed; when not, it fails with
    /// `EAFNOSUPPORT`, which stops `connect` and `bind` to every path-named
    /// and abstract Unix socket. `socketpair(AF_UNIX, …)` is always allowed
    /// (programs use it as a pipe; it reaches nothing outside).
    pub(crate) unix: bool,
    /// The whole floor (privileged and cross-process calls); `false` keeps
    /// only the socket rules (full-access with the network off).
    pub(crate) floor: bool,
    /// Changing file metadata is refused everywhere (read-only mode on the
    /// floor, where Landlock cannot stop `chmod`, `chown`, `utime` and
    /// extended attributes on files the user owns).
    pub(crate) deny_metadata: bool,
    /// `setsid` is refused, so no process leaves the command's session and
    /// process group (needed without a PID namespace to reach every process).
    pub(crate) deny_setsid: bool,
    /// With `deny_setsid`: the only `setpgid` allowed is `setpgid(0, group)`,
    /// joining the command's group (what spawning it does); no process can
    /// make a group of its own. `None` allows `setpgid(0, 0)` instead.
    pub(crate) group: Option<u32>,
}

/// `x32` system calls on x86_64 carry this bit and pass the same
/// architecture check; each refused call is refused under it too.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: i64 = 0x4000_0000;

/// Namespace flags of `clone`.
const CLONE_NAMESPACE_FLAGS: [u64; 7] = [
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
];

/// Refused outright: mounting, namespaces, kernel keyrings, BPF and perf,
/// kexec and modules, the clock, the host name, reboot, tracing other
/// processes, io_uring (whose operations bypass seccomp), and handles that
/// open files by inode.
fn refused_outright() -> Vec<i64> {
    let mut calls = vec![
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
        libc::SYS_clock_adjtime,
        libc::SYS_adjtimex,
        libc::SYS_sethostname,
        libc::SYS_setdomainname,
        libc::SYS_reboot,
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_name_to_handle_at,
        libc::SYS_open_by_handle_at,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
        libc::SYS_quotactl,
        libc::SYS_userfaultfd,
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([libc::SYS_iopl, libc::SYS_ioperm]);
    calls
}

/// Calls that change a file's mode, owner, times or extended attributes.
fn metadata_calls() -> Vec<i64> {
    let mut calls = vec![
        libc::SYS_fchmod,
        libc::SYS_fchmodat,
        libc::SYS_fchown,
        libc::SYS_fchownat,
        libc::SYS_utimensat,
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        libc::SYS_removexattr,
        libc::SYS_lremovexattr,
        libc::SYS_fremovexattr,
        // fchmodat2 (Linux 6.6); not in every libc crate release.
        452,
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        libc::SYS_chmod,
        libc::SYS_chown,
        libc::SYS_lchown,
        libc::SYS_utime,
        libc::SYS_utimes,
        libc::SYS_futimesat,
    ]);
    calls
}

fn cond(
    arg: u8,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, seccompiler::BackendError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Qword, op, value)
}

fn dword(
    arg: u8,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, seccompiler::BackendError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value)
}

/// Rules for `socket` and `socketpair`: families other than the allowed
/// ones, and raw or packet socket types, are refused.
fn socket_rules(network: bool) -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
    let mut families = vec![dword(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?];
    if network {
        families.push(dword(0, SeccompCmpOp::Ne, libc::AF_INET as u64)?);
        families.push(dword(0, SeccompCmpOp::Ne, libc::AF_INET6 as u64)?);
    }
    let mut rules = vec![SeccompRule::new(families)?];
    // The type's low bits; SOCK_NONBLOCK and SOCK_CLOEXEC sit above them.
    // SOCK_RAW, SOCK_RDM, SOCK_DCCP (6) and the obsolete SOCK_PACKET (10).
    for kind in [libc::SOCK_RAW, libc::SOCK_RDM, 6, 10] {
        rules.push(SeccompRule::new(vec![dword(
            1,
            SeccompCmpOp::MaskedEq(0xf),
            kind as u64,
        )?])?);
    }
    Ok(rules)
}

/// A rule matching when argument `arg` (a pid or "who") is not 0, i.e. the
/// call aims at another process than the caller.
fn aimed_elsewhere(arg: u8) -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
    Ok(vec![SeccompRule::new(vec![dword(
        arg,
        SeccompCmpOp::Ne,
        0,
    )?])?])
}

fn rules(spec: FilterSpec) -> Result<BTreeMap<i64, Vec<SeccompRule>>, seccompiler::BackendError> {
    let mut map = BTreeMap::new();
    map.insert(libc::SYS_socket, socket_rules(spec.network)?);
    map.insert(libc::SYS_socketpair, socket_rules(spec.network)?);
    if !spec.floor {
        return Ok(map);
    }
    for call in refused_outright() {
        map.insert(call, Vec::new());
    }
    let mut clone = Vec::new();
    for flag in CLONE_NAMESPACE_FLAGS {
        clone.push(SeccompRule::new(vec![cond(
            CLONE_FLAGS_ARG,
            SeccompCmpOp::MaskedEq(flag),
            flag,
        )?])?);
    }
    map.insert(libc::SYS_clone, clone);
    // prlimit64(pid, resource, new, old): setting another process's limits.
    map.insert(
        libc::SYS_prlimit64,
        vec![SeccompRule::new(vec![
            dword(0, SeccompCmpOp::Ne, 0)?,
            cond(2, SeccompCmpOp::Ne, 0)?,
        ])?],
    );
    // setpriority(which, who, prio) and ioprio_set(which, who, prio).
    map.insert(libc::SYS_setpriority, aimed_elsewhere(1)?);
    map.insert(libc::SYS_ioprio_set, aimed_elsewhere(1)?);
    for call in [
        libc::SYS_sched_setaffinity,
        libc::SYS_sched_setparam,
        libc::SYS_sched_setscheduler,
        libc::SYS_sched_setattr,
    ] {
        map.insert(call, aimed_elsewhere(0)?);
    }
    if spec.deny_metadata {
        for call in metadata_calls() {
            map.insert(call, Vec::new());
        }
    }
    if spec.deny_setsid {
        map.insert(libc::SYS_setsid, Vec::new());
        // Spawning puts the command in its group with setpgid(0, group);
        // any other move (a new group, another group, another process) is
        // refused.
        let allowed = u64::from(spec.group.unwrap_or(0));
        map.insert(
            libc::SYS_setpgid,
            vec![
                SeccompRule::new(vec![dword(0, SeccompCmpOp::Ne, 0)?])?,
                SeccompRule::new(vec![dword(1, SeccompCmpOp::Ne, allowed)?])?,
            ],
        );
    }
    #[cfg(target_arch = "x86_64")]
    {
        let x32: Vec<(i64, Vec<SeccompRule>)> = map
            .iter()
            .map(|(call, rules)| (call | X32_SYSCALL_BIT, rules.clone()))
            .collect();
        map.extend(x32);
    }
    Ok(map)
}

/// The argument of `clone` that holds the flags (the first on most
/// architectures).
const CLONE_FLAGS_ARG: u8 = 0;

/// What `socket(AF_UNIX, …)` fails with when Unix sockets are refused:
/// "Address family not supported by protocol", rare enough in a command's
/// output to name the refusal there.
pub(crate) const UNIX_SOCKET_ERRNO: i32 = libc::EAFNOSUPPORT;

/// Compiles the filter for this architecture. `clone3` is answered with
/// `ENOSYS` by a second, tiny filter (a filter has one match action).
pub(crate) fn compile(spec: FilterSpec) -> Result<Vec<BpfProgram>, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| format!("seccomp filters are not supported on this architecture: {e}"))?;
    let eperm = SeccompAction::Errno(libc::EPERM as u32);
    let main = SeccompFilter::new(
        rules(spec).map_err(|e| format!("the seccomp rules do not compile: {e}"))?,
        SeccompAction::Allow,
        eperm,
        arch,
    )
    .and_then(BpfProgram::try_from)
    .map_err(|e| format!("the seccomp filter does not compile: {e}"))?;
    let mut programs = vec![main];
    if !spec.unix {
        // A filter of its own: its action is a different errno.
        let family = dword(0, SeccompCmpOp::Eq, libc::AF_UNIX as u64)
            .and_then(|c| SeccompRule::new(vec![c]))
            .map_err(|e| format!("the seccomp rules do not compile: {e}"))?;
        let mut unix = BTreeMap::new();
        unix.insert(libc::SYS_socket, vec![family.clone()]);
        #[cfg(target_arch = "x86_64")]
        unix.insert(libc::SYS_socket | X32_SYSCALL_BIT, vec![family]);
        let program = SeccompFilter::new(
            unix,
            SeccompAction::Allow,
            SeccompAction::Errno(UNIX_SOCKET_ERRNO as u32),
            arch,
        )
        .and_then(BpfProgram::try_from)
        .map_err(|e| format!("the seccomp filter does not compile: {e}"))?;
        programs.push(program);
    }
    if spec.floor {
        let mut clone3 = BTreeMap::new();
        clone3.insert(libc::SYS_clone3, Vec::new());
        #[cfg(target_arch = "x86_64")]
        clone3.insert(libc::SYS_clone3 | X32_SYSCALL_BIT, Vec::new());
        let program = SeccompFilter::new(
            clone3,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::ENOSYS as u32),
            arch,
        )
        .and_then(BpfProgram::try_from)
        .map_err(|e| format!("the seccomp filter does not compile: {e}"))?;
        programs.push(program);
    }
    Ok(programs)
}

/// Loads `programs` on the calling thread (inherited by what it spawns).
/// The thread must have `no_new_privs` set.
pub(crate) fn apply(programs: &[BpfProgram]) -> Result<(), String> {
    for program in programs {
        seccompiler::apply_filter(program)
            .map_err(|e| format!("the kernel refused the seccomp filter: {e}"))?;
    }
    Ok(())
}

/// The programs as bubblewrap reads them from `--add-seccomp-fd`: an array
/// of `struct sock_filter` in native byte order.
pub(crate) fn to_bytes(program: &BpfProgram) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(program.len() * 8);
    for insn in program {
        bytes.extend_from_slice(&insn.code.to_ne_bytes());
        bytes.push(insn.jt);
        bytes.push(insn.jf);
        bytes.extend_from_slice(&insn.k.to_ne_bytes());
    }
    bytes
}

/// Whether this kernel accepts seccomp filters: a throwaway thread loads a
/// filter that refuses nothing it uses.
pub(crate) fn probe() -> Result<(), String> {
    let programs = compile(FilterSpec {
        network: true,
        unix: true,
        floor: true,
        deny_metadata: false,
        deny_setsid: false,
        group: None,
    })?;
    std::thread::Builder::new()
        .name("tack-seccomp-probe".to_owned())
        .spawn(move || {
            nix::sys::prctl::set_no_new_privs()
                .map_err(|e| format!("no_new_privs could not be set: {e}"))?;
            apply(&programs)
        })
        .map_err(|e| format!("could not start the seccomp probe: {e}"))?
        .join()
        .map_err(|_| "the seccomp probe panicked".to_owned())?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_compiles() {
        for (network, unix) in [(false, false), (true, true), (false, true)] {
            for floor in [false, true] {
                for deny_setsid in [false, true] {
                    let spec = FilterSpec {
                        network,
                        unix,
                        floor,
                        deny_metadata: deny_setsid,
                        deny_setsid,
                        group: deny_setsid.then_some(4242),
                    };
                    let programs = compile(spec).unwrap();
                    let expected = 1 + usize::from(floor) + usize::from(!unix);
                    assert_eq!(programs.len(), expected);
                    assert!(programs.iter().all(|p| !p.is_empty()));
                    assert_eq!(to_bytes(&programs[0]).len(), programs[0].len() * 8);
                }
            }
        }
    }
}
