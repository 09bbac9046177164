//! User time text → instant times (`yyyyMMddHHmmssSSS`), in the timeline's own clock.

use chrono::{DateTime, Local, NaiveDate, NaiveDateTime, Utc};

use crate::config::TimelineTimezone;
use crate::error::{HudiError, Result};

const INSTANT_FORMAT: &str = "%Y%m%d%H%M%S%3f";

/// Instants pass through; ISO-8601 dates and date-times become instant times. Times without
/// an offset are the timeline's wall clock already (as Hudi reads them); times with an offset
/// are converted to the timeline's zone (`hoodie.table.timeline.timezone`: UTC or local).
pub fn resolve_time(text: &str, tz: TimelineTimezone) -> Result<String> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return match t.len() {
            14 | 17 => Ok(t.to_string()),
            8 => Ok(format!("{t}000000000")),
            _ => Err(HudiError::invalid(format!(
                "{t:?} is not an instant time (yyyyMMddHHmmss[SSS])"
            ))),
        };
    }
    if let Ok(dt) = DateTime::parse_from_rfc3339(t) {
        return Ok(match tz {
            TimelineTimezone::Utc => dt.with_timezone(&Utc).format(INSTANT_FORMAT).to_string(),
            TimelineTimezone::Local => dt.with_timezone(&Local).format(INSTANT_FORMAT).to_string(),
        });
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(dt) = NaiveDateTime::parse_from_str(t, fmt) {
            return Ok(dt.format(INSTANT_FORMAT).to_string());
        }
    }
    if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        return Ok(format!("{}000000000", d.format("%Y%m%d")));
    }
    Err(HudiError::invalid(format!(
        "cannot read {t:?} as an instant time or ISO-8601 date-time"
    )))
}

/// Epoch milliseconds of an instant time on a timeline in zone `tz` (`None` when it is not a
/// date, such as the metadata table's `000…` instants).
pub fn instant_millis(instant: &str, tz: TimelineTimezone) -> Option<i64> {
    use chrono::TimeZone;
    let t = crate::timeline::instant::normalize_time(instant);
    let at = NaiveDateTime::parse_from_str(&t, INSTANT_FORMAT).ok()?;
    Some(match tz {
        TimelineTimezone::Utc => at.and_utc().timestamp_millis(),
        TimelineTimezone::Local => Local
            .from_local_datetime(&at)
            .earliest()?
            .timestamp_millis(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instant_times_are_read_back_as_millis() {
        let ms = instant_millis("20260307162434124", TimelineTimezone::Utc).unwrap();
        assert_eq!(
            crate::timeline::instant_time_from_millis(ms).as_deref(),
            Some("20260307162434124")
        );
        assert_eq!(
            instant_millis("00000000000000000", TimelineTimezone::Utc),
            None
        );
    }

    #[test]
    fn resolves_times() {
        let tz = TimelineTimezone::Utc;
        assert_eq!(
            resolve_time("20260307162434124", tz).unwrap(),
            "20260307162434124"
        );
        assert_eq!(
            resolve_time("2026-03-07 16:24:34.124", tz).unwrap(),
            "20260307162434124"
        );
        assert_eq!(
            resolve_time("2026-03-07T16:24:34Z", tz).unwrap(),
            "20260307162434000"
        );
        assert_eq!(
            resolve_time("2026-03-07T18:24:34+02:00", tz).unwrap(),
            "20260307162434000"
        );
        assert_eq!(resolve_time("2026-03-07", tz).unwrap(), "20260307000000000");
        assert!(resolve_time("yesterday", tz).is_err());
    }

    #[test]
    fn offsets_convert_to_the_local_wall_clock_on_local_timelines() {
        let utc = "2026-03-07T16:24:34Z";
        let expected = DateTime::parse_from_rfc3339(utc)
            .unwrap()
            .with_timezone(&Local)
            .format(INSTANT_FORMAT)
            .to_string();
        assert_eq!(
            resolve_time(utc, TimelineTimezone::Local).unwrap(),
            expected
        );
        // A time without an offset is already the timeline's wall clock.
        assert_eq!(
            resolve_time("2026-03-07 16:24:34", TimelineTimezone::Local).unwrap(),
            "20260307162434000"
        );
    }
}
