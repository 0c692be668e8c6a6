//! JSON as the session's input files are read: a key given twice in one object is refused,
//! naming the key and where it is, instead of the last one silently winning (which would drop a
//! hook or an MCP server the host wrote). Otherwise the same document `serde_json` reads.

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// `text` as one JSON document whose objects name each key once.
pub(crate) fn parse(text: &str) -> Result<Value, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = Strict { at: "the document" }.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// A value, with where it is (for the refusal).
struct Strict<'p> {
    at: &'p str,
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(value) = seq.next_element_seed(Strict { at: self.at })? {
            out.push(value);
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let at = format!("{:?} in {}", key, self.at);
            let value = map.next_value_seed(Strict { at: &at })?;
            if out.insert(key.clone(), value).is_some() {
                return Err(A::Error::custom(format!(
                    "the key {key:?} is given twice in one object ({}); only one would be kept",
                    self.at
                )));
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_key_given_twice_is_refused_naming_it_and_its_place() {
        let error = parse(r#"{"hooks": {"stop": [1], "stop": [2]}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains(
                r#"the key "stop" is given twice in one object ("hooks" in the document)"#
            ),
            "{error}"
        );
        let error = parse(r#"{"a": 1, "a": 1}"#).unwrap_err().to_string();
        assert!(error.contains("(the document)"), "{error}");
    }

    #[test]
    fn any_other_document_reads_as_serde_json_reads_it() {
        for text in [
            r#"{"a": [1, -2, 3.5, "x", null, true, {"b": {}}], "c": {"a": 1}}"#,
            "[]",
            "\"s\"",
            "18446744073709551615",
        ] {
            assert_eq!(
                parse(text).unwrap(),
                serde_json::from_str::<Value>(text).unwrap()
            );
        }
        assert!(parse("{} x").is_err());
        assert!(parse("{").is_err());
    }
}
