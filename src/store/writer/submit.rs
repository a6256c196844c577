//! The submitting side of the writer thread: callers queue a closure and
//! hear its result exactly once, when its transaction is decided.

use super::{Batching, Commit, Op, Request};
use crate::error::{Error, Result};
use crate::store::tenant::TenantWriter;
use crossbeam_channel::{Receiver, Sender};

/// The submitting side of the writer thread.
#[derive(Clone)]
pub(in crate::store) struct Writer {
    pub tx: Sender<Request>,
}

impl Writer {
    /// Queues `f`, batched as `batching` says, and blocks until its
    /// transaction committed (or failed).
    pub fn submit<T, F>(&self, tenant: &str, batching: Batching, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut TenantWriter<'_>) -> Result<T> + Send + 'static,
    {
        self.queue(tenant, batching, f)?.wait()
    }

    /// Queues `f`, batched as `batching` says, and returns at once; the
    /// [`QueuedWrite`] waits for its transaction to be decided (durably).
    pub fn queue<T, F>(&self, tenant: &str, batching: Batching, f: F) -> Result<QueuedWrite<T>>
    where
        T: Send + 'static,
        F: FnOnce(&mut TenantWriter<'_>) -> Result<T> + Send + 'static,
    {
        let (reply_tx, reply) = crossbeam_channel::bounded::<Result<T>>(1);
        let done = move |result| {
            let _ = reply_tx.send(result);
        };
        self.submit_then(tenant, Commit::Durable, batching, f, done)?;
        Ok(QueuedWrite { reply })
    }

    /// Queues `f` and returns at once; `done` receives its result on the
    /// writer thread once the transaction is decided. `done` is called
    /// exactly once, even if the write is dropped unrun.
    pub fn submit_then<T, F, D>(
        &self,
        tenant: &str,
        commit: Commit,
        batching: Batching,
        f: F,
        done: D,
    ) -> Result<()>
    where
        T: Send + 'static,
        F: FnOnce(&mut TenantWriter<'_>) -> Result<T> + Send + 'static,
        D: FnOnce(Result<T>) + Send + 'static,
    {
        let mut done = Once::new(done);
        let op: Op = Box::new(move |w| match f(w) {
            Ok(value) => (
                true,
                Box::new(move |commit_error| {
                    done.call(match commit_error {
                        None => Ok(value),
                        Some(e) => Err(e),
                    })
                }),
            ),
            Err(e) => (false, Box::new(move |_| done.call(Err(e)))),
        });
        self.tx
            .send(Request {
                tenant: tenant.to_string(),
                op,
                commit,
                batching,
                submitted: std::time::Instant::now(),
            })
            .map_err(|_| Error::Unavailable("the memory server is shutting down".into()))
    }
}

/// A write queued on the writer thread, its result still to come.
pub struct QueuedWrite<T> {
    reply: Receiver<Result<T>>,
}

impl<T> QueuedWrite<T> {
    /// Blocks until the write's transaction committed (or failed).
    pub fn wait(self) -> Result<T> {
        self.reply.recv().map_err(|_| dropped())?
    }
}

/// A completion callback that runs exactly once: called explicitly, or with
/// an error when dropped uncalled (an operation dropped before it ran).
struct Once<T> {
    f: Option<Box<dyn FnOnce(Result<T>) + Send>>,
}

impl<T> Once<T> {
    fn new(f: impl FnOnce(Result<T>) + Send + 'static) -> Once<T> {
        Once {
            f: Some(Box::new(f)),
        }
    }

    fn call(&mut self, result: Result<T>) {
        if let Some(f) = self.f.take() {
            f(result);
        }
    }
}

impl<T> Drop for Once<T> {
    fn drop(&mut self) {
        if self.f.is_some() {
            self.call(Err(dropped()));
        }
    }
}

/// The error of a write the writer dropped unanswered: it could not begin
/// its transaction (or savepoint), which on a failing, full or read-only
/// disk is the disk's doing, so the disk is asked before the error is
/// called internal.
fn dropped() -> Error {
    let msg = "write was dropped before it completed";
    Error::from_store(msg, crate::disk_health::diagnose())
}
