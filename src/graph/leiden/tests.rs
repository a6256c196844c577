//! Behaviour tests for community detection.

use super::optimise::{self, RunConfig};
use super::rng::SplitMix64;
use super::test_support::*;
use super::*;

// ----- graph construction -----

#[test]
fn duplicate_edges_in_either_orientation_are_summed() {
    let g = graph(3, &[(0, 1, 1.0), (1, 0, 2.5), (1, 2, 1.0)]);
    assert_eq!(g.edge_count(), 2);
    assert_eq!(g.neighbors(1).collect::<Vec<_>>(), vec![(0, 3.5), (2, 1.0)]);
    assert_eq!(g.total_weight(), 4.5);
    assert_eq!(g.strength(1), Some(4.5));
}

#[test]
fn self_loops_are_dropped_and_counted() {
    let with_loops = graph(3, &[(0, 0, 5.0), (0, 1, 1.0), (2, 2, 1.0), (1, 2, 1.0)]);
    let without = graph(3, &[(0, 1, 1.0), (1, 2, 1.0)]);
    assert_eq!(with_loops.dropped_self_loops(), 2);
    assert_eq!(with_loops.edge_count(), 2);
    let params = LeidenParams::default();
    assert_eq!(
        hierarchical_leiden(&with_loops, &params).unwrap().levels[0].membership,
        hierarchical_leiden(&without, &params).unwrap().levels[0].membership
    );
}

#[test]
fn zero_weight_edges_connect_nothing() {
    let g = graph(2, &[(0, 1, 0.0)]);
    assert_eq!(g.edge_count(), 0);
    assert_eq!(
        leiden(&g, &LeidenParams::default())
            .unwrap()
            .community_count,
        2
    );
}

#[test]
fn invalid_edges_are_errors_not_panics() {
    for weight in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0] {
        assert!(matches!(
            WeightedGraph::from_edges(2, &[(0, 1, 1.0), (1, 1, weight)]),
            Err(LeidenError::InvalidWeight { edge_index: 1, .. })
        ));
    }
    assert_eq!(
        WeightedGraph::from_edges(2, &[(0, 2, 1.0)]),
        Err(LeidenError::NodeOutOfRange {
            edge_index: 0,
            node: 2,
            node_count: 2
        })
    );
    assert_eq!(
        WeightedGraph::from_edges(3, &[(0, 1, f64::MAX), (1, 2, f64::MAX)]),
        Err(LeidenError::WeightOverflow)
    );
    assert!(matches!(
        WeightedGraph::from_edges(usize::MAX, &[]),
        Err(LeidenError::TooManyNodes { .. })
    ));
}

#[test]
fn invalid_parameters_are_errors_not_panics() {
    let g = karate();
    let cases = [
        LeidenParams {
            resolution: f64::NAN,
            ..LeidenParams::default()
        },
        LeidenParams {
            resolution: -1.0,
            ..LeidenParams::default()
        },
        LeidenParams {
            randomness: f64::INFINITY,
            ..LeidenParams::default()
        },
        LeidenParams {
            max_levels: 0,
            ..LeidenParams::default()
        },
        LeidenParams {
            resolution_step: 1.0,
            ..LeidenParams::default()
        },
        LeidenParams {
            level_shrink: 0.0,
            ..LeidenParams::default()
        },
        LeidenParams {
            max_iterations: 0,
            ..LeidenParams::default()
        },
    ];
    for params in cases {
        assert!(matches!(
            hierarchical_leiden(&g, &params),
            Err(LeidenError::InvalidParameter { .. })
        ));
    }
}

// ----- degenerate graphs -----

#[test]
fn empty_graph_gives_one_empty_level() {
    let h = hierarchical_leiden(&graph(0, &[]), &LeidenParams::default()).unwrap();
    assert_eq!(h.levels.len(), 1);
    assert_eq!(h.levels[0].membership, Vec::<u32>::new());
    assert_eq!(h.levels[0].community_count, 0);
    assert_eq!(h.levels[0].modularity, 0.0);
}

#[test]
fn single_node_is_its_own_community() {
    let h = hierarchical_leiden(&graph(1, &[(0, 0, 1.0)]), &LeidenParams::default()).unwrap();
    assert_eq!(h.levels.len(), 1);
    assert_eq!(h.levels[0].membership, vec![0]);
    assert_eq!(h.levels[0].modularity, 0.0);
}

#[test]
fn isolated_nodes_stay_singletons_at_every_level() {
    // Triangle 0-1-2, isolated 3, edge 4-5, isolated 6.
    let g = graph(7, &unit_edges(&[(0, 1), (1, 2), (0, 2), (4, 5)]));
    let h = hierarchical_leiden(&g, &LeidenParams::default()).unwrap();
    for level in &h.levels {
        let communities = level.communities();
        assert!(communities.contains(&vec![3]));
        assert!(communities.contains(&vec![6]));
    }
    assert_eq!(h.levels[0].membership, vec![0, 0, 0, 1, 2, 2, 3]);
}

#[test]
fn edgeless_graph_has_zero_modularity() {
    let g = graph(4, &[]);
    let p = leiden(&g, &LeidenParams::default()).unwrap();
    assert_eq!(p.membership, vec![0, 1, 2, 3]);
    assert_eq!(p.modularity, 0.0);
    assert_eq!(modularity(&g, &[0, 0, 0, 0], 1.0), Ok(0.0));
}

// ----- modularity -----

#[test]
fn modularity_matches_brute_force_on_small_graphs() {
    let mut rng = SplitMix64::new(7);
    for trial in 0..200u64 {
        let n = 1 + rng.below(12);
        let edges = random_graph(n, rng.below(30), trial);
        let g = graph(n, &edges);
        let communities = 1 + rng.below(n);
        let membership: Vec<u32> = (0..n).map(|_| rng.below(communities) as u32 * 7).collect();
        for resolution in [0.0, 0.5, 1.0, 2.0] {
            let fast = modularity(&g, &membership, resolution).unwrap();
            let slow = brute_force_modularity(n, &edges, &membership, resolution);
            assert!(
                (fast - slow).abs() < 1e-12,
                "trial {trial}: {fast} vs {slow}"
            );
        }
    }
}

#[test]
fn reported_modularity_matches_independent_computation() {
    let (n, edges, _) = planted_partition(4, 15, 0.4, 0.05, 3);
    let g = graph(n, &edges);
    for level in hierarchical_leiden(&g, &LeidenParams::default())
        .unwrap()
        .levels
    {
        let slow = brute_force_modularity(n, &edges, &level.membership, 1.0);
        assert!((level.modularity - slow).abs() < 1e-12);
    }
}

#[test]
fn modularity_rejects_membership_of_wrong_length() {
    assert_eq!(
        modularity(&karate(), &[0; 3], 1.0),
        Err(LeidenError::MembershipLength {
            expected: 34,
            actual: 3
        })
    );
}

// ----- finding communities -----

#[test]
fn two_cliques_joined_by_one_edge_split_in_two() {
    let mut edges = clique(0..6);
    edges.extend(clique(6..12));
    edges.push((5, 6, 1.0));
    let p = leiden(&graph(12, &edges), &LeidenParams::default()).unwrap();
    assert_eq!(p.membership, vec![0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]);
}

#[test]
fn karate_club_reaches_known_optimum() {
    let g = karate();
    assert_eq!(g.edge_count(), 78);
    assert_eq!(g.strength(0), Some(16.0));
    assert_eq!(g.strength(33), Some(17.0));
    let p = leiden(&g, &LeidenParams::default()).unwrap();
    // The best known modularity of this graph is 0.4198 with 4 communities.
    assert!(
        (0.41..=0.42).contains(&p.modularity),
        "modularity {}",
        p.modularity
    );
    assert_eq!(p.community_count, 4);
}

#[test]
fn karate_club_is_near_optimal_for_many_seeds() {
    let g = karate();
    for seed in 0..50 {
        let params = LeidenParams {
            seed,
            ..LeidenParams::default()
        };
        let q = leiden(&g, &params).unwrap().modularity;
        assert!(q > 0.41, "seed {seed}: modularity {q}");
    }
}

#[test]
fn recovers_planted_partition_of_stochastic_block_model() {
    for seed in 0..5 {
        let (n, edges, truth) = planted_partition(8, 40, 0.3, 0.01, seed);
        let p = leiden(&graph(n, &edges), &LeidenParams::default()).unwrap();
        assert!(same_partition(&p.membership, &truth), "seed {seed}");
    }
}

#[test]
fn cpm_splits_cliques_where_density_drops_below_resolution() {
    let mut edges = clique(0..5);
    edges.extend(clique(5..10));
    edges.push((4, 5, 1.0));
    let params = LeidenParams {
        quality: Quality::Cpm,
        resolution: 0.5,
        ..LeidenParams::default()
    };
    let p = leiden(&graph(10, &edges), &params).unwrap();
    assert_eq!(p.membership, vec![0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
}

#[test]
fn arbitrary_inputs_and_parameters_never_panic() {
    let mut rng = SplitMix64::new(2024);
    let scales = [1e-300, 1e-9, 1.0, 1e9, 1e250];
    for trial in 0..300u64 {
        let n = rng.below(60);
        let scale = scales[rng.below(scales.len())];
        let edges: Vec<(u32, u32, f64)> = (0..rng.below(200))
            .map(|_| {
                let a = rng.below(n.max(1)) as u32;
                let b = rng.below(n.max(1)) as u32;
                (a, b, scale * rng.next_f64())
            })
            .collect();
        let Ok(g) = WeightedGraph::from_edges(n, &edges) else {
            continue; // Overflowing totals are refused, not panicked on.
        };
        let params = LeidenParams {
            resolution: [0.0, 0.1, 1.0, 5.0, 1e300][rng.below(5)],
            quality: if rng.below(2) == 0 {
                Quality::Modularity
            } else {
                Quality::Cpm
            },
            seed: trial,
            randomness: [0.0, 0.01, 1.0][rng.below(3)],
            max_levels: 1 + rng.below(6),
            resolution_step: [0.1, 0.5, 0.99][rng.below(3)],
            level_shrink: [0.01, 0.5, 0.99][rng.below(3)],
            max_iterations: 1 + rng.below(4),
            min_community_size: rng.below(6),
        };
        let h = hierarchical_leiden(&g, &params).unwrap();
        for level in &h.levels {
            assert_eq!(level.membership.len(), n);
            assert!(level
                .membership
                .iter()
                .all(|&c| (c as usize) < level.community_count));
            assert_eq!(disconnected_communities(&g, &level.membership), 0);
        }
    }
}

#[test]
fn star_and_complete_graphs_form_one_community() {
    let star: Vec<(u32, u32, f64)> = (1..2000).map(|v| (0, v, 1.0)).collect();
    let p = leiden(&graph(2000, &star), &LeidenParams::default()).unwrap();
    assert_eq!(p.community_count, 1);
    let p = leiden(&graph(60, &clique(0..60)), &LeidenParams::default()).unwrap();
    assert_eq!(p.community_count, 1);
}

#[test]
fn rescaling_all_weights_changes_nothing() {
    let (n, edges, _) = planted_partition(6, 20, 0.3, 0.03, 17);
    let reference = hierarchical_leiden(&graph(n, &edges), &LeidenParams::default()).unwrap();
    for factor in [0.001, 4.0, 1024.0] {
        let scaled: Vec<_> = edges.iter().map(|&(a, b, w)| (a, b, w * factor)).collect();
        let h = hierarchical_leiden(&graph(n, &scaled), &LeidenParams::default()).unwrap();
        let memberships = |h: &Hierarchy| -> Vec<Vec<u32>> {
            h.levels.iter().map(|l| l.membership.clone()).collect()
        };
        assert_eq!(memberships(&h), memberships(&reference), "factor {factor}");
    }
}

// ----- determinism -----

#[test]
fn same_graph_and_parameters_give_identical_hierarchy() {
    let (n, edges, _) = planted_partition(10, 30, 0.2, 0.02, 11);
    let g = graph(n, &edges);
    let params = LeidenParams::default();
    let first = hierarchical_leiden(&g, &params).unwrap();
    for _ in 0..3 {
        assert_eq!(hierarchical_leiden(&g, &params).unwrap(), first);
    }
}

#[test]
fn result_does_not_depend_on_edge_order_or_orientation() {
    let n = 300;
    let mut edges = random_graph(n, 1200, 5);
    // Duplicates of existing edges exercise the summing order too.
    let duplicates: Vec<_> = edges[..200]
        .iter()
        .map(|&(a, b, w)| (b, a, w * 0.3))
        .collect();
    edges.extend(duplicates);
    let reference = hierarchical_leiden(&graph(n, &edges), &LeidenParams::default()).unwrap();
    let mut rng = SplitMix64::new(99);
    for _ in 0..5 {
        let mut shuffled: Vec<(u32, u32, f64)> = edges
            .iter()
            .map(|&(a, b, w)| {
                if rng.below(2) == 0 {
                    (a, b, w)
                } else {
                    (b, a, w)
                }
            })
            .collect();
        rng.shuffle(&mut shuffled);
        let h = hierarchical_leiden(&graph(n, &shuffled), &LeidenParams::default()).unwrap();
        assert_eq!(h, reference);
    }
}

#[test]
fn community_ids_are_numbered_by_smallest_member() {
    let (n, edges, _) = planted_partition(6, 20, 0.3, 0.02, 8);
    for level in hierarchical_leiden(&graph(n, &edges), &LeidenParams::default())
        .unwrap()
        .levels
    {
        let firsts: Vec<u32> = level.communities().iter().map(|c| c[0]).collect();
        assert!(firsts.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(firsts.len(), level.community_count);
    }
}

#[test]
fn different_seeds_still_give_good_partitions() {
    let (n, edges, truth) = planted_partition(5, 30, 0.4, 0.02, 21);
    let g = graph(n, &edges);
    for seed in 0..10 {
        let params = LeidenParams {
            seed,
            ..LeidenParams::default()
        };
        assert!(same_partition(
            &leiden(&g, &params).unwrap().membership,
            &truth
        ));
    }
}

// ----- connectivity: the Leiden guarantee -----

#[test]
fn louvain_move_phase_disconnects_a_community_and_refinement_repairs_it() {
    // Node 0 bridges triangles {1,2,3} and {4,5,6} but is pulled harder
    // towards clique {7..10}; a large clique {11..30} makes 2m large so the
    // triangles' own cohesion dominates.
    let mut edges = unit_edges(&[(1, 2), (2, 3), (1, 3), (4, 5), (5, 6), (4, 6)]);
    edges.extend((1..7).map(|v| (0, v, 1.0)));
    edges.extend(clique(7..11));
    edges.extend((7..11).map(|v| (0, v, 2.0)));
    edges.extend(clique(11..31));
    let g = graph(31, &edges);
    let config = default_config(&g);
    let null = optimise::null_weights(&g, Quality::Modularity);
    let penalty = optimise::penalty(&g, Quality::Modularity, 1.0);
    for seed in 0..20 {
        let mut rng = SplitMix64::new(seed);
        // Start from the partition Louvain would hold before node 0 moves.
        let mut partition: Vec<u32> = (0..31)
            .map(|v| match v {
                0..=6 => 0,
                7..=10 => 7,
                _ => 11,
            })
            .collect();
        optimise::move_nodes_fast(
            &g,
            &null,
            penalty,
            config.tolerance,
            &mut partition,
            &mut rng,
        );
        assert_eq!(partition[0], partition[7], "node 0 joins the clique");
        assert!((1..7).all(|v| partition[v] == partition[1]));
        assert_eq!(
            disconnected_communities(&g, &partition),
            1,
            "Louvain's defect"
        );

        let refined =
            optimise::refine_partition(&g, &null, penalty, config.theta, &partition, &mut rng);
        assert_eq!(disconnected_communities(&g, &refined), 0);
        assert_ne!(refined[1], refined[4], "the two triangles are separated");
        for v in 0..31 {
            for u in 0..31 {
                if refined[v] == refined[u] {
                    assert_eq!(partition[v], partition[u], "refinement only splits");
                }
            }
        }
    }
    let p = leiden(&g, &LeidenParams::default()).unwrap();
    assert_eq!(disconnected_communities(&g, &p.membership), 0);
}

#[test]
fn leiden_communities_are_connected_where_louvain_ones_are_not() {
    // Sparse clustered graphs, optimised for several iterations, are where
    // the Leiden paper observed Louvain's disconnected communities.
    let (n, blocks) = (5000, 100);
    let mut louvain_broken = 0;
    for seed in 0..4u64 {
        let g = graph(n, &clustered_graph(n, 2 * n, blocks, 0.3, seed));
        let leiden_config = default_config(&g);
        let louvain_config = RunConfig {
            refine: false,
            ..leiden_config
        };
        let mut rng = SplitMix64::new(seed);
        let mut leiden_membership: Vec<u32> = (0..n as u32).collect();
        let mut louvain_membership = leiden_membership.clone();
        for _ in 0..5 {
            leiden_membership = optimise::run(&g, leiden_membership, &leiden_config, &mut rng);
            optimise::renumber(&mut leiden_membership);
            assert_eq!(disconnected_communities(&g, &leiden_membership), 0);
            louvain_membership = optimise::run(&g, louvain_membership, &louvain_config, &mut rng);
            optimise::renumber(&mut louvain_membership);
        }
        louvain_broken += disconnected_communities(&g, &louvain_membership);
    }
    assert!(louvain_broken > 0, "these graphs should expose Louvain");
}

#[test]
fn every_level_is_connected_on_random_graphs() {
    for seed in 0..100u64 {
        let mut rng = SplitMix64::new(1000 + seed);
        let n = 10 + rng.below(300);
        let edges = random_graph(n, n * (1 + rng.below(3)), seed);
        let g = graph(n, &edges);
        let mut config = default_config(&g);
        // The core run, before the safety net in `detect_level`.
        let raw = optimise::run(&g, (0..n as u32).collect(), &config, &mut rng);
        assert_eq!(disconnected_communities(&g, &raw), 0, "seed {seed}");
        config.resolution = 0.3;
        let raw = optimise::run(&g, (0..n as u32).collect(), &config, &mut rng);
        assert_eq!(disconnected_communities(&g, &raw), 0, "seed {seed}");
        for level in hierarchical_leiden(&g, &LeidenParams::default())
            .unwrap()
            .levels
        {
            assert_eq!(disconnected_communities(&g, &level.membership), 0);
        }
    }
}

// ----- hierarchy -----

#[test]
fn levels_are_nested_and_strictly_coarser() {
    let (n, edges, _) = planted_partition(16, 25, 0.3, 0.01, 4);
    let h = hierarchical_leiden(&graph(n, &edges), &LeidenParams::default()).unwrap();
    assert!(h.levels.len() >= 2, "levels: {}", h.levels.len());
    for pair in h.levels.windows(2) {
        let (fine, coarse) = (&pair[0], &pair[1]);
        assert!(coarse.community_count <= fine.community_count / 2);
        assert!(coarse.resolution < fine.resolution);
        assert_eq!(fine.parents.len(), fine.community_count);
        for v in 0..n {
            assert_eq!(
                coarse.membership[v],
                fine.parents[fine.membership[v] as usize]
            );
        }
    }
    assert!(h.levels.last().unwrap().parents.is_empty());
    assert_eq!(h.parent(0, 0), Some(h.levels[0].parents[0]));
    assert_eq!(h.parent(h.levels.len(), 0), None);
}

#[test]
fn hierarchy_recovers_nested_planted_structure() {
    // 4 groups of 6 blocks of 25 nodes: dense blocks, sparse links between
    // blocks of a group, very sparse links between groups.
    let (groups, blocks, block_size) = (4, 6, 25);
    let n = groups * blocks * block_size;
    let block = |v: usize| (v / block_size) as u32;
    let group = |v: usize| (v / (blocks * block_size)) as u32;
    let mut rng = SplitMix64::new(12);
    let mut edges = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            let p = if block(a) == block(b) {
                0.4
            } else if group(a) == group(b) {
                0.01
            } else {
                0.0005
            };
            if rng.next_f64() < p {
                edges.push((a as u32, b as u32, 1.0));
            }
        }
    }
    let blocks_truth: Vec<u32> = (0..n).map(block).collect();
    let groups_truth: Vec<u32> = (0..n).map(group).collect();
    let h = hierarchical_leiden(&graph(n, &edges), &LeidenParams::default()).unwrap();
    assert!(same_partition(&h.levels[0].membership, &blocks_truth));
    assert!(
        h.levels
            .iter()
            .any(|level| same_partition(&level.membership, &groups_truth)),
        "counts: {:?}",
        h.levels
            .iter()
            .map(|l| l.community_count)
            .collect::<Vec<_>>()
    );
}

#[test]
fn hierarchy_stops_once_communities_are_components() {
    // Two components: coarsening can at most reach one community each.
    let mut edges = clique(0..4);
    edges.extend(clique(4..8));
    edges.extend(clique(8..12));
    edges.push((3, 4, 1.0));
    edges.push((7, 8, 1.0));
    edges.extend(clique(12..16));
    let params = LeidenParams {
        max_levels: 10,
        ..LeidenParams::default()
    };
    let h = hierarchical_leiden(&graph(16, &edges), &params).unwrap();
    let last = h.levels.last().unwrap();
    assert_eq!(last.community_count, 2);
    assert!(h.levels.len() < 10);
}

#[test]
fn max_levels_bounds_the_hierarchy() {
    let (n, edges, _) = planted_partition(16, 25, 0.3, 0.01, 4);
    let params = LeidenParams {
        max_levels: 1,
        ..LeidenParams::default()
    };
    assert_eq!(
        hierarchical_leiden(&graph(n, &edges), &params)
            .unwrap()
            .levels
            .len(),
        1
    );
}

#[test]
fn small_communities_are_merged_into_neighbours() {
    // Two 6-cliques; a pendant pair 12-13 hangs off node 0; 14 is isolated.
    let mut edges = clique(0..6);
    edges.extend(clique(6..12));
    edges.extend(unit_edges(&[(5, 6), (0, 12), (12, 13)]));
    let g = graph(15, &edges);
    let params = LeidenParams {
        min_community_size: 3,
        ..LeidenParams::default()
    };
    let h = hierarchical_leiden(&g, &params).unwrap();
    for level in &h.levels {
        for community in level.communities() {
            assert!(
                community.len() >= 3 || community == vec![14],
                "{community:?}"
            );
        }
        assert_eq!(disconnected_communities(&g, &level.membership), 0);
    }
    let level0 = &h.levels[0];
    assert_eq!(level0.membership[12], level0.membership[0]);
    assert_eq!(level0.membership[13], level0.membership[0]);
}

#[test]
fn karate_club_coarser_level_is_the_historical_split() {
    // Members who followed the instructor when the club split (0-based).
    let instructor = [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 16, 17, 19, 21];
    let h = hierarchical_leiden(&karate(), &LeidenParams::default()).unwrap();
    let halves = h
        .levels
        .iter()
        .find(|level| level.community_count == 2)
        .expect("a two-community level");
    let wrong: Vec<usize> = (0..34)
        .filter(|&v| (halves.membership[v] == halves.membership[0]) != instructor.contains(&v))
        .collect();
    // Member 9 (index 8) is the textbook exception: more ties to the
    // officer's side, yet he followed the instructor.
    assert_eq!(wrong, vec![8]);
}
