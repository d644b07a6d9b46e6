//! Every key a serializable output can emit, found by serializing it: a serializer that
//! writes nothing and records each struct field's path, including the fields a
//! `skip_serializing_if` left out of this value (serde still names them, `skip_field`), so
//! a key that an empty list or an absent note leaves out of one run's JSON is still seen.
//! String map keys are recorded as well: a flattened struct's fields come as map entries.

use std::collections::BTreeSet;

use serde::ser::{self, Serialize};

/// A field's path from the top: `["cnp", "notes"]`; lists add nothing to it.
pub type FieldPath = Vec<String>;

/// Every field path of `value`.
pub fn field_paths(value: &impl Serialize) -> BTreeSet<FieldPath> {
    let mut r = Recorder { path: Vec::new(), found: BTreeSet::new(), key: None };
    value.serialize(&mut r).expect("the recorder never fails");
    r.found
}

struct Recorder {
    path: FieldPath,
    found: BTreeSet<FieldPath>,
    /// The map key whose value comes next.
    key: Option<String>,
}

#[derive(Debug)]
pub struct Never;

impl std::fmt::Display for Never {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("never")
    }
}

impl std::error::Error for Never {}

impl ser::Error for Never {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Never
    }
}

impl Recorder {
    fn field<T: ?Sized + Serialize>(&mut self, key: &str, value: Option<&T>) -> Result<(), Never> {
        self.path.push(key.to_string());
        self.found.insert(self.path.clone());
        let r = value.map_or(Ok(()), |v| v.serialize(&mut *self));
        self.path.pop();
        r
    }
}

macro_rules! nothing {
    ($($name:ident: $t:ty),*) => {
        $(fn $name(self, _: $t) -> Result<(), Never> { Ok(()) })*
    };
}

impl ser::Serializer for &mut Recorder {
    type Ok = ();
    type Error = Never;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    nothing!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64, serialize_f32: f32,
        serialize_f64: f64, serialize_char: char, serialize_str: &str, serialize_bytes: &[u8],
        serialize_unit_struct: &'static str);

    fn serialize_none(self) -> Result<(), Never> {
        Ok(())
    }
    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> Result<(), Never> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Never> {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Never> {
        Ok(())
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, v: &T) -> Result<(), Never> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), Never> {
        self.field(variant, Some(v))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self, Never> {
        Ok(self)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self, Never> {
        Ok(self)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self, Never> {
        Ok(self)
    }
    fn serialize_tuple_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self, Never> {
        Ok(self)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self, Never> {
        Ok(self)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Never> {
        Ok(self)
    }
    fn serialize_struct_variant(self, _: &'static str, _: u32, _: &'static str, _: usize) -> Result<Self, Never> {
        Ok(self)
    }
}

/// The sequence-like serializers: each element recorded in turn, under no name of its own.
macro_rules! elements {
    ($($trait:ident :: $method:ident),*) => {$(
        impl ser::$trait for &mut Recorder {
            type Ok = ();
            type Error = Never;
            fn $method<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Never> {
                v.serialize(&mut **self)
            }
            fn end(self) -> Result<(), Never> {
                Ok(())
            }
        }
    )*};
}

elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for &mut Recorder {
    type Ok = ();
    type Error = Never;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), Never> {
        self.key = match serde_json::to_value(key) {
            Ok(serde_json::Value::String(k)) => Some(k),
            _ => None,
        };
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, v: &T) -> Result<(), Never> {
        match self.key.take() {
            Some(key) => self.field(&key, Some(v)),
            None => v.serialize(&mut **self),
        }
    }
    fn end(self) -> Result<(), Never> {
        Ok(())
    }
}

/// The struct-like serializers: each field recorded under its name, a skipped one too.
macro_rules! fields {
    ($($trait:ident),*) => {$(
        impl ser::$trait for &mut Recorder {
            type Ok = ();
            type Error = Never;
            fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, v: &T) -> Result<(), Never> {
                self.field(key, Some(v))
            }
            fn skip_field(&mut self, key: &'static str) -> Result<(), Never> {
                self.field::<()>(key, None)
            }
            fn end(self) -> Result<(), Never> {
                Ok(())
            }
        }
    )*};
}

fields!(SerializeStruct, SerializeStructVariant);
