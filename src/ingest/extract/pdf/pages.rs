//! The page tree: pages in document order with their inherited resources.
//!
//! The walk is iterative (no recursion on hostile depth), visits every node
//! at most once (cycles and repeated kids are ignored), and is bounded by the
//! nesting and page limits. If the tree yields nothing, every object with
//! `/Type /Page` is taken instead, in object-number order.

use std::collections::HashSet;
use std::rc::Rc;

use super::document::Document;
use super::error::{LimitKind, PdfError};
use super::limits::too_large;
use super::object::{Dict, ObjRef, Object};

pub(super) struct Page {
    pub dict: Rc<Dict>,
    /// `/Resources` of the page or of its nearest ancestor that has them.
    pub resources: Option<Rc<Dict>>,
}

/// Collects the pages of `doc`.
pub(super) fn collect(doc: &Document<'_>) -> Result<Vec<Page>, PdfError> {
    let mut pages = Vec::new();
    if let Some(catalog) = doc.catalog() {
        if let Some(root) = catalog.get(b"Pages") {
            walk(doc, root, &mut pages)?;
        }
    }
    doc.check()?;
    if pages.is_empty() {
        pages = orphan_pages(doc)?;
    }
    Ok(pages)
}

fn walk(doc: &Document<'_>, root: &Object, pages: &mut Vec<Page>) -> Result<(), PdfError> {
    let max_pages = doc.limits.max_pages;
    let mut visited: HashSet<ObjRef> = HashSet::new();
    // (node, inherited resources, depth); kids are pushed in reverse so they
    // pop in document order.
    let mut stack: Vec<(Object, Option<Rc<Dict>>, usize)> = vec![(root.clone(), None, 0)];
    while let Some((node, inherited, depth)) = stack.pop() {
        if let Object::Ref(r) = node {
            if !visited.insert(r) {
                continue;
            }
        }
        let Object::Dict(dict) = doc.resolve(&node) else {
            continue;
        };
        let resources = match doc.get(&dict, b"Resources") {
            Object::Dict(r) => Some(r),
            _ => inherited,
        };
        let kids = doc.get(&dict, b"Kids");
        let is_tree_node =
            dict.has_type(b"Pages") || (!dict.has_type(b"Page") && kids.as_array().is_some());
        if is_tree_node {
            if depth >= doc.limits.max_nesting_depth {
                continue;
            }
            if let Some(kids) = kids.as_array() {
                for kid in kids.iter().rev() {
                    stack.push((kid.clone(), resources.clone(), depth + 1));
                }
            }
        } else {
            if pages.len() == max_pages {
                return Err(too_large(LimitKind::Pages, max_pages));
            }
            pages.push(Page { dict, resources });
        }
    }
    Ok(())
}

/// Pages that are not reachable through the tree: the fallback for
/// documents whose catalog or page tree is damaged.
fn orphan_pages(doc: &Document<'_>) -> Result<Vec<Page>, PdfError> {
    let max_pages = doc.limits.max_pages;
    let mut pages = Vec::new();
    for num in doc.all_object_numbers() {
        if let Object::Dict(dict) = doc.load(ObjRef { num, gen: 0 }) {
            if dict.has_type(b"Page") {
                if pages.len() == max_pages {
                    return Err(too_large(LimitKind::Pages, max_pages));
                }
                let resources = match doc.get(&dict, b"Resources") {
                    Object::Dict(r) => Some(r),
                    _ => None,
                };
                pages.push(Page { dict, resources });
            }
        }
        doc.check()?;
    }
    Ok(pages)
}
