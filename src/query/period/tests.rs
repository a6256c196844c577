use super::*;

#[test]
fn the_words_of_each_phrase_read_are_kept() {
    let words = |q: &str| read(q).words().to_vec();
    assert_eq!(
        words("What race did Ana run last month?"),
        ["last", "month"]
    );
    assert_eq!(words("What did we buy in May 2023?"), ["may", "2023"]);
    assert_eq!(
        words("Where were we between 3 March and 9 March 2024?"),
        ["3", "march", "and", "9", "march", "2024"]
    );
    assert!(words("What did we buy?").is_empty());
}
use crate::clock::days_from_civil as day;

fn days(first: i64, last: i64) -> Period {
    Period::Days { first, last }
}

#[test]
fn questions_name_days_months_and_years() {
    assert_eq!(
        question_periods("What did Jo accomplish in January 2022?", None),
        [days(day(2022, 1, 1), day(2022, 1, 31))]
    );
    assert_eq!(
        question_periods(
            "What was mentioned on 3 June, 2023 and on July 7th, 2023?",
            None
        ),
        [
            days(day(2023, 6, 3), day(2023, 6, 3)),
            days(day(2023, 7, 7), day(2023, 7, 7))
        ]
    );
    assert_eq!(
        question_periods("Where was she in the week before 2023-11-16?", None),
        [days(day(2023, 11, 16), day(2023, 11, 16))]
    );
    assert_eq!(
        question_periods("Which spot did he visit in May, and what in 2021?", None),
        [
            Period::Yearless {
                month: 5,
                day: None
            },
            days(day(2021, 1, 1), day(2021, 12, 31))
        ]
    );
    assert_eq!(
        question_periods("What did she post on Aug 15th?", None),
        [Period::Yearless {
            month: 8,
            day: Some(15)
        }]
    );
}

#[test]
fn between_two_days_is_the_days_from_one_to_the_other() {
    assert_eq!(
        question_periods("Where was he between August 11 and August 15 2023?", None),
        [days(day(2023, 8, 11), day(2023, 8, 15))]
    );
    assert_eq!(
        question_periods("What changed between March 2022 and 2023-02-01?", None),
        [days(day(2022, 3, 1), day(2023, 2, 1))]
    );
    // Without any year there is no one span: each end on its own.
    assert_eq!(
        question_periods("Where was he between August 11 and August 15?", None),
        [
            Period::Yearless {
                month: 8,
                day: Some(11)
            },
            Period::Yearless {
                month: 8,
                day: Some(15)
            }
        ]
    );
}

#[test]
fn seasons_are_three_months() {
    assert_eq!(
        question_periods("What state did Jo visit in summer 2021?", None),
        [days(day(2021, 6, 1), day(2021, 8, 31))]
    );
    assert_eq!(
        question_periods("Where did they go in the fall of 2022?", None),
        [days(day(2022, 9, 1), day(2022, 11, 30))]
    );
    assert_eq!(
        question_periods("Did it snow in the winter of 2023?", None),
        [days(day(2023, 12, 1), day(2024, 2, 29))]
    );
    // A season without a year names no period.
    assert!(question_periods("What are her plans for the summer?", None).is_empty());
}

#[test]
fn bound_words_open_a_period() {
    assert_eq!(
        question_periods("How many games had he won by July 10, 2022?", None),
        [days(OPEN_START, day(2022, 7, 10))]
    );
    assert_eq!(
        question_periods("What did she write before May 2023?", None),
        [days(OPEN_START, day(2023, 4, 30))]
    );
    assert_eq!(
        question_periods("What happened earlier than 2021?", None),
        [days(OPEN_START, day(2020, 12, 31))]
    );
    assert_eq!(
        question_periods("What has he cooked since March 2023?", None),
        [days(day(2023, 3, 1), OPEN_END)]
    );
    assert_eq!(
        question_periods("Where did they move after 2019?", None),
        [days(day(2020, 1, 1), OPEN_END)]
    );
    assert_eq!(
        question_periods("What changed until 2023-01-05?", None),
        [days(OPEN_START, day(2023, 1, 5))]
    );
    // An offset from a day is that day, not a bound.
    for q in [
        "What did he do the week before August 3, 2023?",
        "What puppy did she get two weeks before August 3, 2023?",
        "What was shown on the Sunday before August 3, 2023?",
    ] {
        assert_eq!(
            question_periods(q, None),
            [days(day(2023, 8, 3), day(2023, 8, 3))],
            "{q}"
        );
    }
    // "after" before something that is not a date bounds nothing.
    assert!(question_periods("What did he do after the trip?", None).is_empty());
}

#[test]
fn open_periods_admit_everything_on_their_open_side() {
    let by = question_periods("by July 10, 2022", None)[0];
    assert!(by.admits(day(1990, 1, 1), 3, 14));
    assert!(by.admits(day(2022, 7, 24), 3, 14));
    assert!(!by.admits(day(2022, 7, 25), 3, 14));
    let since = question_periods("since March 2023", None)[0];
    assert!(since.admits(day(2100, 1, 1), 3, 14));
    assert!(since.admits(day(2023, 2, 26), 3, 14));
    assert!(!since.admits(day(2023, 2, 25), 3, 14));
}

#[test]
fn relative_phrases_count_from_the_reference_day() {
    // Wednesday 15 November 2023.
    let today = day(2023, 11, 15);
    let at = |q: &str| question_periods(q, Some(today));
    assert_eq!(
        at("What did she do last year?"),
        [days(day(2022, 1, 1), day(2022, 12, 31))]
    );
    assert_eq!(
        at("What happened this month?"),
        [days(day(2023, 11, 1), day(2023, 11, 30))]
    );
    assert_eq!(
        at("Where was he last week?"),
        [days(day(2023, 11, 6), day(2023, 11, 12))]
    );
    assert_eq!(
        at("What did he cook yesterday?"),
        [days(day(2023, 11, 14), day(2023, 11, 14))]
    );
    assert_eq!(
        at("What did they buy two weeks ago?"),
        [days(day(2023, 10, 30), day(2023, 11, 5))]
    );
    assert_eq!(
        at("Who moved 3 months ago?"),
        [days(day(2023, 8, 1), day(2023, 8, 31))]
    );
    assert_eq!(
        at("What did John and Max enjoy last summer?"),
        [days(day(2023, 6, 1), day(2023, 8, 31))]
    );
    assert_eq!(
        at("What has she painted since last year?"),
        [days(day(2022, 1, 1), OPEN_END)]
    );
    // In January, last month is December of the year before; in a
    // summer, last summer is the one before it.
    assert_eq!(
        question_periods("What happened last month?", Some(day(2024, 1, 10))),
        [days(day(2023, 12, 1), day(2023, 12, 31))]
    );
    assert_eq!(
        question_periods("Where were they last summer?", Some(day(2024, 7, 10))),
        [days(day(2023, 6, 1), day(2023, 8, 31))]
    );
    assert_eq!(
        question_periods("Where will they go next summer?", Some(day(2024, 7, 10))),
        [days(day(2025, 6, 1), day(2025, 8, 31))]
    );
    // No reference day: no period.
    assert!(question_periods("What did she do last year?", None).is_empty());
}

#[test]
fn a_named_date_anchors_the_relative_phrases_beside_it() {
    let today = day(2024, 3, 1);
    assert_eq!(
        question_periods(
            "What was his writing issue last week, as mentioned on November 6, 2023?",
            Some(today)
        ),
        [days(day(2023, 11, 6), day(2023, 11, 6))]
    );
}

#[test]
fn words_that_only_look_like_dates_name_no_period() {
    let today = Some(day(2023, 11, 15));
    assert!(question_periods("May I ask what she said?", today).is_empty());
    assert!(question_periods("How many of the 30 photos did he march with?", today).is_empty());
    assert!(question_periods("What did the 12345 code mean?", today).is_empty());
    assert!(question_periods("Did the leaves fall after the storm?", today).is_empty());
    assert!(question_periods("What is this one about?", today).is_empty());
}

#[test]
fn periods_admit_documents_written_shortly_after_them() {
    let jan = question_periods("in January 2022", None)[0];
    assert!(jan.admits(day(2022, 1, 15), 3, 14));
    assert!(jan.admits(day(2022, 2, 10), 3, 14));
    assert!(!jan.admits(day(2022, 3, 1), 3, 14));
    assert!(!jan.admits(day(2021, 12, 20), 3, 14));
    let may = question_periods("in May", None)[0];
    assert!(may.admits(day(2019, 5, 30), 3, 14));
    assert!(!may.admits(day(2019, 7, 30), 3, 14));
}
