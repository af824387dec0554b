//! The policy in force in each interpreter of the process, for the guards
//! on what interpreters share (static types): they look up the caller's.

use std::sync::{Arc, RwLock};

use rustpython_vm::VirtualMachine;

use super::Policy;

/// The policies in force, by interpreter (its global state's address).
static POLICIES: RwLock<Vec<(usize, Arc<Policy>)>> = RwLock::new(Vec::new());

fn key(vm: &VirtualMachine) -> usize {
    std::ptr::from_ref(&*vm.state) as usize
}

pub(super) fn policy_of(vm: &VirtualMachine) -> Option<Arc<Policy>> {
    let key = key(vm);
    let policies = POLICIES.read().unwrap_or_else(|e| e.into_inner());
    policies
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, p)| p.clone())
}

/// Keeps an interpreter's policy in force; drop it after the interpreter.
#[must_use = "the policy is in force while the registration lives"]
pub struct Registration(usize);

impl Drop for Registration {
    fn drop(&mut self) {
        let mut policies = POLICIES.write().unwrap_or_else(|e| e.into_inner());
        policies.retain(|(k, _)| *k != self.0);
    }
}

pub(super) fn register(vm: &VirtualMachine, policy: Arc<Policy>) -> Registration {
    let key = key(vm);
    let mut policies = POLICIES.write().unwrap_or_else(|e| e.into_inner());
    policies.retain(|(k, _)| *k != key);
    policies.push((key, policy));
    Registration(key)
}
