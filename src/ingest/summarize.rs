//! The summarizer: the thread that adds the optional LLM's summaries to
//! stored community snapshots.
//!
//! Runs only when LLM summaries are configured (`summarize` in
//! `ALAYASIKI_LLM_USE`). Upkeep (`super::upkeep`) builds and stores each
//! snapshot extractively, as without an LLM; this thread then looks, every
//! [`UPKEEP_POLL`], for a tenant whose latest snapshot it has not yet gone
//! through, and asks the LLM about that snapshot's largest communities
//! (`graph::llm_summaries`: at most `MAX_LLM_COMMUNITY_SUMMARIES`, one
//! request each). Accepted summaries are added to the snapshot in one
//! write, if it is still stored. A community whose input (title, members,
//! facts, chunk texts) is the same as one already summarized, in any stored
//! snapshot, gets that summary again without a request; one whose input
//! was rejected before is not asked about again while this process runs.
//!
//! It is a thread of its own so that nothing waits for the LLM: not
//! queries, not ingestion, not upkeep's retention sweep. An unreachable or
//! failing server ends the pass (what was accepted is kept) and the tenant
//! is tried again after [`LLM_SUMMARY_RETRY`]; failures go to the log,
//! never to a client. Stopping takes effect between requests and waits at
//! most [`super::enrich::ENRICHER_STOP_WAIT`] for one in flight.

use std::collections::{HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use super::enrich::ENRICHER_STOP_WAIT;
use super::upkeep::UPKEEP_POLL;
use crate::error::Result;
use crate::graph::communities::LlmSummary;
use crate::graph::llm_summaries;
use crate::llm::{Llm, Task};
use crate::model_endpoint::excerpt;
use crate::store::{Store, Tenant};

/// How long after a failed pass (the LLM unreachable or failing) a tenant's
/// snapshot is tried again.
pub const LLM_SUMMARY_RETRY: Duration = Duration::from_secs(60);

/// Inputs whose summary was rejected that are remembered (beyond it the
/// memory starts over).
const MAX_REMEMBERED_REJECTIONS: usize = 10_000;

/// Handle to the running summarizer thread.
pub struct Summarizer {
    stop: Arc<AtomicBool>,
    wake: Sender<()>,
    thread: Mutex<Option<(JoinHandle<()>, Receiver<()>)>>,
}

impl Summarizer {
    /// Starts the summarizer if LLM summaries are configured (`None`
    /// otherwise).
    pub fn start(store: Arc<Store>, llm: Option<Arc<Llm>>) -> std::io::Result<Option<Summarizer>> {
        let Some(llm) = llm.filter(|l| l.config().summarize) else {
            return Ok(None);
        };
        let stop = Arc::new(AtomicBool::new(false));
        let (wake, woken) = crossbeam_channel::bounded(1);
        let (exited_tx, exited_rx) = crossbeam_channel::bounded(1);
        let thread_stop = stop.clone();
        let handle = std::thread::Builder::new()
            .name("llm-summarizer".into())
            .spawn(move || {
                run(&store, &llm, &thread_stop, &woken);
                let _ = exited_tx.send(());
            })?;
        Ok(Some(Summarizer {
            stop,
            wake,
            thread: Mutex::new(Some((handle, exited_rx))),
        }))
    }

    /// Asks the thread to stop between requests (does not wait).
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.wake.try_send(());
    }

    /// Stops between requests; waits at most [`ENRICHER_STOP_WAIT`] for a
    /// request in flight (its summary is then not stored).
    pub fn stop(&self) {
        self.request_stop();
        let taken = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some((handle, exited)) = taken {
            if exited.recv_timeout(ENRICHER_STOP_WAIT).is_ok() {
                let _ = handle.join();
            } else {
                log::info!("leaving an LLM community summary request in flight");
            }
        }
    }
}

/// How a pass over one tenant's snapshot ended.
#[derive(Debug, PartialEq)]
enum Pass {
    /// Every chosen community was dealt with (the snapshot's version).
    Done(i64),
    /// The LLM was unreachable or failing: try again later.
    Unavailable,
    /// A stop was requested.
    Stopped,
}

/// What the thread remembers between passes.
#[derive(Default)]
struct State {
    /// Tenant → version of the snapshot last gone through.
    done: HashMap<String, i64>,
    /// Tenant → when a failed pass may be tried again.
    retry_at: HashMap<String, Instant>,
    /// Digests of inputs whose summary was rejected.
    rejected: HashSet<String>,
}

fn run(store: &Store, llm: &Llm, stop: &AtomicBool, woken: &Receiver<()>) {
    let mut state = State::default();
    while !stop.load(Ordering::SeqCst) {
        match store.tenants_with_communities() {
            Ok(tenants) => {
                for tenant in tenants {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    if pass_due(store, &tenant, &state) {
                        go_through(store, &tenant, llm, stop, &mut state);
                    }
                }
            }
            Err(e) => log::warn!("cannot look for community snapshots to summarize: {e}"),
        }
        let _ = woken.recv_timeout(UPKEEP_POLL);
    }
}

/// Whether the tenant's latest snapshot still needs a pass.
fn pass_due(store: &Store, tenant: &Tenant, state: &State) -> bool {
    let name = tenant.name();
    if state
        .retry_at
        .get(name)
        .is_some_and(|at| Instant::now() < *at)
    {
        return false;
    }
    match store
        .reader(tenant)
        .and_then(|r| r.community_versions().map(|(_, built)| built))
    {
        Ok(built) => built >= 0 && state.done.get(name) != Some(&built),
        Err(e) => {
            log::warn!("cannot read community versions: {e}");
            false
        }
    }
}

fn go_through(store: &Store, tenant: &Tenant, llm: &Llm, stop: &AtomicBool, state: &mut State) {
    if state.rejected.len() > MAX_REMEMBERED_REJECTIONS {
        state.rejected.clear();
    }
    let name = tenant.name().to_string();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        summarize_snapshot(store, tenant, llm, stop, &mut state.rejected)
    }));
    match outcome {
        Ok(Ok(Pass::Done(version))) => {
            state.done.insert(name.clone(), version);
            state.retry_at.remove(&name);
        }
        Ok(Ok(Pass::Stopped)) => {}
        Ok(Ok(Pass::Unavailable)) => {
            state
                .retry_at
                .insert(name, Instant::now() + LLM_SUMMARY_RETRY);
        }
        Ok(Err(e)) => {
            log::warn!("LLM community summaries failed, will retry: {e}");
            state
                .retry_at
                .insert(name, Instant::now() + LLM_SUMMARY_RETRY);
        }
        Err(_) => {
            log::error!("LLM community summaries panicked");
            state
                .retry_at
                .insert(name, Instant::now() + LLM_SUMMARY_RETRY);
        }
    }
}

/// Asks for the summaries of the latest snapshot's chosen communities and
/// stores those accepted. Store errors are returned; LLM failures end the
/// pass as [`Pass::Unavailable`] or cost only their community.
fn summarize_snapshot(
    store: &Store,
    tenant: &Tenant,
    llm: &Llm,
    stop: &AtomicBool,
    rejected: &mut HashSet<String>,
) -> Result<Pass> {
    let (snapshot, mut known, texts) = {
        let reader = store.reader(tenant)?;
        let built = reader.community_versions()?.1;
        let Some(snapshot) = reader.latest_communities()? else {
            // Withheld until rebuilt (retention): nothing to summarize.
            return Ok(Pass::Done(built));
        };
        let keys: Vec<(i64, f64)> = llm_summaries::candidates(&snapshot.summaries)
            .into_iter()
            .flat_map(|i| snapshot.summaries[i].citations.iter())
            .map(|c| (c.chunk_key, 0.0))
            .collect();
        let texts: HashMap<i64, String> = reader
            .chunks_by_keys(&keys)?
            .into_iter()
            .map(|h| (h.chunk_key, h.text))
            .collect();
        (snapshot, reader.stored_llm_summaries()?, texts)
    };
    let schema = llm_summaries::schema();
    let mut accepted: Vec<(usize, u32, LlmSummary)> = Vec::new();
    let (mut asked, mut reused, mut refused) = (0, 0, 0);
    let mut pass = Pass::Done(snapshot.graph_version);
    for i in llm_summaries::candidates(&snapshot.summaries) {
        let summary = &snapshot.summaries[i];
        if summary.llm_summary.is_some() {
            continue;
        }
        let chunks: Vec<(i64, &str)> = summary
            .citations
            .iter()
            .filter_map(|c| texts.get(&c.chunk_key).map(|t| (c.chunk_key, t.as_str())))
            .collect();
        let Some(prompt) = llm_summaries::prompt(summary, &chunks) else {
            continue;
        };
        if let Some(earlier) = known.get(&prompt.digest) {
            accepted.push((summary.level, summary.community, earlier.clone()));
            reused += 1;
            continue;
        }
        if rejected.contains(&prompt.digest) {
            continue;
        }
        if stop.load(Ordering::SeqCst) {
            pass = Pass::Stopped;
            break;
        }
        asked += 1;
        let reply = llm.complete_json(&Task {
            name: llm_summaries::SCHEMA_NAME,
            system: llm_summaries::SYSTEM_PROMPT,
            user: &prompt.user,
            schema: &schema,
        });
        match reply {
            Ok(reply) => match llm_summaries::validate(&reply, &prompt) {
                Ok(llm_summary) => {
                    known.insert(prompt.digest.clone(), llm_summary.clone());
                    accepted.push((summary.level, summary.community, llm_summary));
                }
                Err(why) => {
                    log::info!(
                        "LLM community summary rejected ({why}): {}",
                        excerpt(&reply.to_string())
                    );
                    rejected.insert(prompt.digest);
                    refused += 1;
                }
            },
            Err(e) if e.is_unavailable() => {
                pass = Pass::Unavailable;
                break;
            }
            Err(_) => {
                rejected.insert(prompt.digest);
                refused += 1;
            }
        }
    }
    let added = if accepted.is_empty() {
        0
    } else {
        let version = snapshot.graph_version;
        store.write(tenant, move |w| w.store_llm_summaries(version, &accepted))?
    };
    if asked > 0 || added > 0 {
        log::info!(
            "LLM community summaries of snapshot {}: {added} stored ({reused} reused), \
             {asked} requested, {refused} rejected{}",
            snapshot.graph_version,
            if pass == Pass::Unavailable {
                "; the LLM is unavailable, trying again later"
            } else {
                ""
            }
        );
    }
    Ok(pass)
}
