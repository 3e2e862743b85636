//! TensorStore's partial zarr v3 codec chains, as its `zarr3` driver takes
//! them in `metadata.codecs` and `schema.codec`: codecs may be given as names
//! (`"gzip"`), configurations may be partial or left out, and the array ->
//! bytes codec may be omitted. When an array is created, the chain is
//! *resolved* ([`ChainSpec::resolve`]): every option gets the value
//! TensorStore chooses, and the result is the `codecs` member TensorStore
//! writes. When an array is opened, a chain constrains the stored one
//! ([`ChainSpec::merge`]): each option given must match.
//!
//! The codecs TensorStore defines (the registry's entries with `tensorstore`
//! members: `transpose`, `bytes`, `sharding_indexed`, `gzip`, `zstd`,
//! `blosc`, `crc32c`) are checked option by option, by those members' types.
//! The other codecs zarrox implements (`vlen-utf8`, `packbits`,
//! `numcodecs.*`) are *extensions*: accepted as given, their configuration
//! checked when the metadata is validated.

use std::collections::BTreeMap;
use std::fmt::Display;

use serde_json::{json, Map, Value};

use super::array_to_array::transpose::is_permutation;
use super::array_to_bytes::sharding::{
    chunks_per_shard, default_index_codecs, DEFAULT_INDEX_LOCATION,
};
use super::config::{Member, MemberType};
use super::registry::{self, check_order, Kind, OrderProblem};
use crate::error::{Error, Result};
use crate::selection::spec_json::{array, check_members, fail, integer, member, object};

/// One option given to a codec: a checked JSON value, or (a sharding codec's
/// `codecs` and `index_codecs`) a partial chain.
#[derive(Debug, Clone, PartialEq)]
pub enum Opt {
    Json(Value),
    Chain(ChainSpec),
}

impl Opt {
    fn to_json(&self) -> Value {
        match self {
            Opt::Json(v) => v.clone(),
            Opt::Chain(c) => c.to_json(),
        }
    }
}

/// One codec of a partial chain: its name, kind and the options given.
/// An `extension` (a codec TensorStore does not define) keeps its
/// configuration as given.
#[derive(Debug, Clone, PartialEq)]
pub struct CodecSpec {
    pub name: String,
    pub kind: Kind,
    pub options: BTreeMap<String, Opt>,
    pub extension: bool,
}

/// A partial chain: array -> array codecs, at most one array -> bytes codec,
/// bytes -> bytes codecs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChainSpec {
    pub array_to_array: Vec<CodecSpec>,
    pub array_to_bytes: Option<CodecSpec>,
    pub bytes_to_bytes: Vec<CodecSpec>,
}

/// What a chain says about the chunks it decodes: the storage order of
/// elements, the shape of the read chunks (sharding: inner chunks), and
/// whether read chunks are the whole chunk (no sharding).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DecodedLayout {
    pub inner_order: Option<Vec<usize>>,
    pub read_chunk_shape: Option<Vec<u64>>,
    pub read_is_whole_chunk: bool,
}

/// The path of item `i` of the array at `at`.
fn item(at: &str, i: usize) -> String {
    format!("{at}[{i}]")
}

/// A value as the Python layer quoted it: strings in single quotes.
fn repr(value: &Value) -> String {
    match value {
        Value::String(s) => format!("'{s}'"),
        other => other.to_string(),
    }
}

/// Names as a Python list: `['a', 'b']`.
fn names<S: Display>(items: &[S]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("'{s}'")).collect();
    format!("[{}]", quoted.join(", "))
}

/// How the chain's errors name a kind: `array -> bytes`.
fn kind_words(kind: Kind) -> &'static str {
    match kind {
        Kind::ArrayToArray => "array -> array",
        Kind::ArrayToBytes => "array -> bytes",
        Kind::BytesToBytes => "bytes -> bytes",
    }
}

/// Whether Python took the value as false (`x or {}`): null, false, 0, empty.
fn is_falsy(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// `[values[p] for p in perm]`, or a spec error at `at` where `perm` points
/// past `values`.
fn permute<T: Copy>(values: &[T], perm: &[usize], at: &str) -> Result<Vec<T>> {
    perm.iter()
        .map(|&p| values.get(p).copied())
        .collect::<Option<Vec<T>>>()
        .ok_or_else(|| {
            fail(
                at,
                format!(
                    "{perm:?} is not a permutation of {} dimensions",
                    values.len()
                ),
            )
        })
}

/// The inverse of a permutation (`perm` has been checked to be one).
fn invert(perm: &[usize]) -> Vec<usize> {
    let mut inv = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        if let Some(slot) = inv.get_mut(p) {
            *slot = i;
        }
    }
    inv
}

/// `0..rank`, allocated fallibly (the rank is the caller's).
fn identity(rank: usize) -> Result<Vec<usize>> {
    let mut out = crate::alloc::with_capacity(rank)?;
    out.extend(0..rank);
    Ok(out)
}

/// A transpose `order` (`"C"`, `"F"` or a permutation) for `rank` dimensions.
fn resolve_order(order: &Value, rank: usize) -> Result<Vec<usize>> {
    Ok(match order.as_str() {
        Some("C") => identity(rank)?,
        Some("F") => {
            let mut out = identity(rank)?;
            out.reverse();
            out
        }
        _ => order
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_u64)
                    .map(|v| v as usize)
                    .collect()
            })
            .unwrap_or_default(),
    })
}

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

/// An integer in `[lo, hi]` (the registry's bounds; its extremes unbounded).
fn int_in(value: &Value, at: &str, lo: i64, hi: i64) -> Result<Value> {
    integer(value, at, lo, hi).map(Value::from)
}

/// A list of integers, each at least `lo`.
fn int_list(value: &Value, at: &str, lo: i64) -> Result<Vec<i64>> {
    array(value, at)?
        .iter()
        .enumerate()
        .map(|(i, v)| integer(v, &item(at, i), lo, i64::MAX))
        .collect()
}

/// A transpose `order`: `"C"`, `"F"` or a permutation.
fn parse_order(value: &Value, at: &str) -> Result<Value> {
    if matches!(value.as_str(), Some("C" | "F")) {
        return Ok(value.clone());
    }
    let order = int_list(value, at, 0)?;
    let as_usize: Option<Vec<usize>> = order.iter().map(|&v| usize::try_from(v).ok()).collect();
    match as_usize {
        Some(o) if is_permutation(&o, o.len()) => Ok(Value::from(order)),
        _ => Err(fail(
            at,
            format!(
                "expected a permutation, \"C\" or \"F\", got {}",
                repr(value)
            ),
        )),
    }
}

/// A choice among `choices` and (TensorStore takes them too, in sorted order)
/// the `unsupported` ones.
fn parse_choice(value: &Value, at: &str, choices: &[&str], unsupported: &[&str]) -> Result<Value> {
    let mut all = choices.to_vec();
    if !unsupported.is_empty() {
        all.extend_from_slice(unsupported);
        all.sort_unstable();
    }
    let Some(s) = value.as_str() else {
        return Err(fail(at, format!("expected a string, got {}", repr(value))));
    };
    if !all.contains(&s) {
        return Err(fail(
            at,
            format!("expected one of {}, got {}", names(&all), repr(value)),
        ));
    }
    Ok(value.clone())
}

/// One option, parsed by its registry member's type.
fn parse_option(m: &Member, value: &Value, at: &str) -> Result<Opt> {
    let json = match m.ty {
        MemberType::Int { min, max } => int_in(value, at, min, max)?,
        MemberType::Bool => match value {
            Value::Bool(_) => value.clone(),
            _ => {
                return Err(fail(
                    at,
                    format!("expected true or false, got {}", repr(value)),
                ))
            }
        },
        MemberType::Choice {
            choices,
            unsupported,
        } => parse_choice(value, at, choices, unsupported)?,
        MemberType::Order => parse_order(value, at)?,
        MemberType::Shape => Value::from(int_list(value, at, 1)?),
        MemberType::Chain => return ChainSpec::parse(value, at, false).map(Opt::Chain),
    };
    Ok(Opt::Json(json))
}

impl CodecSpec {
    /// Codec `name` of the registry, with no options.
    fn named(name: &str) -> Result<CodecSpec> {
        let entry = registry::lookup(name)
            .ok_or_else(|| Error::spec(format!("'{name}' is not a registered codec")))?;
        Ok(CodecSpec {
            name: name.to_string(),
            kind: entry.kind,
            options: BTreeMap::new(),
            extension: entry.tensorstore.is_none(),
        })
    }

    /// A codec given as a name or as `{"name", "configuration"}`.
    pub fn parse(value: &Value, at: &str) -> Result<CodecSpec> {
        let named;
        let value = match value {
            Value::String(s) => {
                named = json!({ "name": s });
                &named
            }
            other => other,
        };
        let obj = object(value, at)?;
        let allowed = ["name", "configuration", "must_understand"].map(String::from);
        check_members(obj, &allowed, at)?;
        let name = obj
            .get("name")
            .ok_or_else(|| fail(at, "missing member \"name\""))?;
        let name_at = member(at, "name");
        let name = name
            .as_str()
            .ok_or_else(|| fail(&name_at, format!("expected a string, got {}", repr(name))))?;
        let config_at = member(at, "configuration");
        let empty = Value::Object(Map::new());
        let config = obj.get("configuration").filter(|v| !is_falsy(v));
        let config = object(config.unwrap_or(&empty), &config_at)?;
        let Some(entry) = registry::lookup(name).filter(|c| c.implemented()) else {
            let mut known: Vec<&str> = registry::CODECS
                .iter()
                .filter(|c| c.implemented())
                .map(|c| c.name)
                .collect();
            known.sort_unstable();
            return Err(fail(
                &name_at,
                format!(
                    "'{name}' is not a registered codec; expected one of {}",
                    names(&known)
                ),
            ));
        };
        let mut codec = CodecSpec::named(entry.name)?;
        codec.options = match entry.tensorstore {
            Some(members) => Self::parse_options(name, members, config, &config_at)?,
            None => config
                .iter()
                .map(|(k, v)| (k.clone(), Opt::Json(v.clone())))
                .collect(),
        };
        Ok(codec)
    }

    /// The options of a codec TensorStore defines, checked by its `members`.
    fn parse_options(
        name: &str,
        members: &[Member],
        config: &Map<String, Value>,
        at: &str,
    ) -> Result<BTreeMap<String, Opt>> {
        let keys: Vec<String> = members.iter().map(|m| m.key.to_string()).collect();
        check_members(config, &keys, at)?;
        if let Some(m) = members
            .iter()
            .find(|m| m.required && !config.contains_key(m.key))
        {
            return Err(fail(
                at,
                format!("the {name} codec needs member \"{}\"", m.key),
            ));
        }
        let mut options = BTreeMap::new();
        for m in members {
            if let Some(v) = config.get(m.key) {
                options.insert(m.key.to_string(), parse_option(m, v, &member(at, m.key))?);
            }
        }
        Ok(options)
    }

    fn json(&self, key: &str) -> Option<&Value> {
        match self.options.get(key) {
            Some(Opt::Json(v)) => Some(v),
            _ => None,
        }
    }

    fn chain(&self, key: &str) -> Option<&ChainSpec> {
        match self.options.get(key) {
            Some(Opt::Chain(c)) => Some(c),
            _ => None,
        }
    }

    /// `{"name", "configuration"}`, without an empty configuration.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("name".into(), Value::from(self.name.as_str()));
        if !self.options.is_empty() {
            let config: Map<String, Value> = self
                .options
                .iter()
                .map(|(k, v)| (k.clone(), v.to_json()))
                .collect();
            out.insert("configuration".into(), Value::Object(config));
        }
        Value::Object(out)
    }
}

impl ChainSpec {
    /// A codec chain: array -> array codecs, at most one array -> bytes codec
    /// (required when `complete`, as in stored metadata), then bytes -> bytes
    /// codecs.
    pub fn parse(value: &Value, at: &str, complete: bool) -> Result<ChainSpec> {
        let codecs = array(value, at)?
            .iter()
            .enumerate()
            .map(|(i, v)| CodecSpec::parse(v, &item(at, i)))
            .collect::<Result<Vec<_>>>()?;
        check_chain_order(&codecs, at)?;
        let mut chain = ChainSpec::default();
        for codec in codecs {
            match codec.kind {
                Kind::ArrayToArray => chain.array_to_array.push(codec),
                Kind::ArrayToBytes => chain.array_to_bytes = Some(codec),
                Kind::BytesToBytes => chain.bytes_to_bytes.push(codec),
            }
        }
        if complete && chain.array_to_bytes.is_none() {
            return Err(fail(at, "missing the array -> bytes codec"));
        }
        Ok(chain)
    }

    /// The chain of a schema's `codec` member at `at`'s `codec`
    /// (`{"driver": "zarr3", "codecs": [...]}`); `None` when it gives none.
    pub fn from_schema_codec(codec: &Value, at: &str) -> Result<Option<ChainSpec>> {
        let at = member(at, "codec");
        let mut obj = object(codec, &at)?.clone();
        if let Some(driver) = obj.remove("driver").filter(|d| d != "zarr3") {
            return Err(fail(
                &member(&at, "driver"),
                format!(
                    "expected \"zarr3\" for the zarr3 driver, got {}",
                    repr(&driver)
                ),
            ));
        }
        check_members(&obj, &["codecs".to_string()], &at)?;
        obj.get("codecs")
            .map(|codecs| ChainSpec::parse(codecs, &member(&at, "codecs"), false))
            .transpose()
    }

    /// Every codec, in chain order.
    pub fn codecs(&self) -> impl Iterator<Item = &CodecSpec> {
        self.array_to_array
            .iter()
            .chain(&self.array_to_bytes)
            .chain(&self.bytes_to_bytes)
    }

    /// The sharding codec, when the array -> bytes codec is one.
    pub fn sharding(&self) -> Option<&CodecSpec> {
        self.array_to_bytes
            .as_ref()
            .filter(|c| c.name == "sharding_indexed")
    }

    /// How many sharding codecs are nested in the chain.
    fn sharding_height(&self) -> usize {
        self.sharding().map_or(0, |s| {
            1 + s.chain("codecs").map_or(0, ChainSpec::sharding_height)
        })
    }

    pub fn to_json(&self) -> Value {
        Value::from(self.codecs().map(CodecSpec::to_json).collect::<Vec<_>>())
    }
}

/// The order of a (partial) chain, as the registry rules it
/// ([`check_order`], which the metadata layer asks too); a chain without its
/// array -> bytes codec is checked as if that codec stood after the array ->
/// array codecs it begins with.
fn check_chain_order(codecs: &[CodecSpec], at: &str) -> Result<()> {
    let mut kinds: Vec<Kind> = codecs.iter().map(|c| c.kind).collect();
    // the codec at each position of `kinds` (None: the one assumed)
    let mut index: Vec<Option<usize>> = (0..codecs.len()).map(Some).collect();
    if !kinds.contains(&Kind::ArrayToBytes) {
        let first = kinds
            .iter()
            .position(|&k| k != Kind::ArrayToArray)
            .unwrap_or(kinds.len());
        kinds.insert(first, Kind::ArrayToBytes);
        index.insert(first, None);
    }
    let Some(problem) = check_order(&kinds) else {
        return Ok(());
    };
    let serializers: Vec<usize> = codecs
        .iter()
        .enumerate()
        .filter(|(_, c)| c.kind == Kind::ArrayToBytes)
        .map(|(i, _)| i)
        .collect();
    let (i, message) = match problem {
        OrderProblem::SeveralArrayToBytes => {
            (serializers.get(1), "a second array -> bytes codec {}")
        }
        OrderProblem::BytesToBytesBefore(_) => (
            serializers.first(),
            "the array -> bytes codec {} must come before the bytes -> bytes codecs",
        ),
        OrderProblem::ArrayToArrayAfter(k) => (
            index.get(k).and_then(Option::as_ref),
            "the array -> array codec {} must come before the others",
        ),
        OrderProblem::NoArrayToBytes => (None, ""),
    };
    match i.and_then(|&i| codecs.get(i).map(|c| (i, c))) {
        Some((i, c)) => Err(fail(
            &item(at, i),
            message.replace("{}", &format!("'{}'", c.name)),
        )),
        None => Err(fail(at, "the codecs are out of order")),
    }
}

// ---------------------------------------------------------------------------
// Merging (opening: constraints against the stored chain; creating: metadata
// and schema)
// ---------------------------------------------------------------------------

fn mismatch(at: &str, a: &Value, b: &Value, why: impl Display) -> Error {
    Error::spec_mismatch(format!(
        "{at}: cannot merge codec constraints {a} and {b}: {why}"
    ))
}

fn codecs_json(codecs: &[CodecSpec]) -> Value {
    Value::from(codecs.iter().map(CodecSpec::to_json).collect::<Vec<_>>())
}

impl CodecSpec {
    fn merge(
        &self,
        source: &CodecSpec,
        at: &str,
        strict: bool,
        rank: Option<usize>,
    ) -> Result<Self> {
        let fail = |why: String| mismatch(at, &self.to_json(), &source.to_json(), why);
        if self.name != source.name {
            return Err(fail("different codecs".into()));
        }
        if self.extension || source.extension {
            let (mine, theirs) = (&self.options, &source.options);
            if !mine.is_empty() && !theirs.is_empty() && mine != theirs {
                return Err(fail("configurations differ".into()));
            }
            let options = if mine.is_empty() { theirs } else { mine };
            return Ok(CodecSpec {
                options: options.clone(),
                extension: true,
                ..self.clone()
            });
        }
        let mut options = self.options.clone();
        for (key, value) in &source.options {
            let Some(mine) = options.get(key) else {
                options.insert(key.clone(), value.clone());
                continue;
            };
            let merged = match (mine, value, rank) {
                (Opt::Chain(a), Opt::Chain(b), _) => {
                    Opt::Chain(a.merge(b, &member(at, key), strict, rank)?)
                }
                (Opt::Json(a), Opt::Json(b), Some(rank)) if key == "order" => {
                    if resolve_order(a, rank)? != resolve_order(b, rank)? {
                        return Err(fail(format!(
                            "incompatible \"{key}\": {} vs {}",
                            repr(a),
                            repr(b)
                        )));
                    }
                    continue;
                }
                (a, b, _) if a == b => continue,
                (a, b, _) => {
                    let (a, b) = (a.to_json(), b.to_json());
                    return Err(fail(format!(
                        "incompatible \"{key}\": {} vs {}",
                        repr(&a),
                        repr(&b)
                    )));
                }
            };
            options.insert(key.clone(), merged);
        }
        Ok(CodecSpec {
            options,
            ..self.clone()
        })
    }
}

/// The codecs of one kind both lists describe; unless `strict`, either list
/// of array -> array codecs may have one more transpose at its end.
fn merge_lists(
    targets: &[CodecSpec],
    sources: &[CodecSpec],
    kind: Kind,
    at: &str,
    strict: bool,
    rank: Option<usize>,
) -> Result<Vec<CodecSpec>> {
    let mut targets = targets.to_vec();
    let mut count = targets.len();
    let mut mismatched = targets.len() != sources.len();
    let is_transpose = |c: Option<&CodecSpec>| c.is_some_and(|c| c.name == "transpose");
    if kind == Kind::ArrayToArray && !strict {
        if sources.len() == targets.len() + 1 && is_transpose(sources.last()) {
            targets.extend(sources.last().cloned());
            mismatched = false;
        } else if sources.len() + 1 == targets.len() && is_transpose(targets.last()) {
            count -= 1;
            mismatched = false;
        }
    }
    if mismatched {
        return Err(mismatch(
            at,
            &codecs_json(&targets),
            &codecs_json(sources),
            format!(
                "mismatch in number of {} codecs ({} vs {})",
                kind_words(kind),
                targets.len(),
                sources.len()
            ),
        ));
    }
    for (i, (target, source)) in targets.iter_mut().zip(sources).take(count).enumerate() {
        *target = target.merge(source, &item(at, i), strict, rank)?;
    }
    Ok(targets)
}

impl ChainSpec {
    /// The chain both describe. `strict` (opening): the codecs must
    /// correspond one to one. Otherwise (a metadata chain and a schema codec
    /// chain) a chain without sharding may describe the inner chunks of the
    /// other's sharding codec.
    pub fn merge(
        &self,
        source: &ChainSpec,
        at: &str,
        strict: bool,
        rank: Option<usize>,
    ) -> Result<Self> {
        if !strict {
            let (th, sh) = (self.sharding_height(), source.sharding_height());
            if th > sh && self.array_to_array.is_empty() && self.bytes_to_bytes.is_empty() {
                return self.merge_into_shard(source, at, rank);
            }
            if sh > th && source.array_to_array.is_empty() && source.bytes_to_bytes.is_empty() {
                return source.merge_into_shard(self, at, rank);
            }
        }
        // in chain order: the first codecs that differ are the ones named
        let array_to_array = merge_lists(
            &self.array_to_array,
            &source.array_to_array,
            Kind::ArrayToArray,
            at,
            strict,
            rank,
        )?;
        let array_to_bytes = match (&self.array_to_bytes, &source.array_to_bytes) {
            (Some(t), Some(s)) => Some(t.merge(s, at, strict, rank)?),
            (t, s) => t.clone().or_else(|| s.clone()),
        };
        Ok(ChainSpec {
            array_to_array,
            array_to_bytes,
            bytes_to_bytes: merge_lists(
                &self.bytes_to_bytes,
                &source.bytes_to_bytes,
                Kind::BytesToBytes,
                at,
                strict,
                rank,
            )?,
        })
    }

    /// This sharded chain with `inner` as (or merged into) its inner chain.
    fn merge_into_shard(&self, inner: &ChainSpec, at: &str, rank: Option<usize>) -> Result<Self> {
        let mut out = self.clone();
        if let Some(sharding) = out.array_to_bytes.as_mut() {
            let sub = match sharding.chain("codecs") {
                None => inner.clone(),
                Some(sub) => sub.merge(inner, at, false, rank)?,
            };
            sharding.options.insert("codecs".into(), Opt::Chain(sub));
        }
        Ok(out)
    }

    // -----------------------------------------------------------------------
    // The chunk layout a chain implies
    // -----------------------------------------------------------------------

    /// What the chain says of the chunks it decodes, for `rank` dimensions.
    pub fn decoded_layout(&self, rank: usize) -> Result<DecodedLayout> {
        // encoded dimension i is decoded dimension perm[i]
        let mut perm = identity(rank)?;
        for c in self.array_to_array.iter().filter(|c| c.name == "transpose") {
            let order = resolve_order(c.json("order").unwrap_or(&Value::Null), rank)?;
            if order.len() != rank {
                return Err(fail(
                    "codecs",
                    format!("transpose order {order:?} does not have rank {rank}"),
                ));
            }
            perm = permute(&perm, &order, "codecs")?;
        }
        let Some(a2b) = &self.array_to_bytes else {
            let order = (!self.array_to_array.is_empty()).then_some(perm);
            return Ok(DecodedLayout {
                inner_order: order,
                ..DecodedLayout::default()
            });
        };
        if a2b.name != "sharding_indexed" {
            return Ok(DecodedLayout {
                inner_order: Some(perm),
                read_chunk_shape: None,
                read_is_whole_chunk: true,
            });
        }
        let mut out = DecodedLayout::default();
        if let Some(shape) = a2b.json("chunk_shape") {
            let shape: Vec<u64> = shape
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_u64)
                .collect();
            if shape.len() != rank {
                return Err(fail(
                    "codecs",
                    format!("sharding chunk_shape {shape:?} does not have rank {rank}"),
                ));
            }
            out.read_chunk_shape = Some(permute(&shape, &invert(&perm), "codecs")?);
        }
        if let Some(sub) = a2b.chain("codecs") {
            if let Some(inner) = sub.decoded_layout(rank)?.inner_order {
                out.inner_order = Some(permute(&perm, &inner, "codecs")?);
            }
        }
        Ok(out)
    }
}

// ---------------------------------------------------------------------------
// Resolving (creating): every option chosen as TensorStore chooses it
// ---------------------------------------------------------------------------

/// The chunks a chain is resolved for: their shape, the size of their
/// elements, the requested storage order of their elements and the read
/// (inner) chunk shape a sharding codec without one takes.
#[derive(Debug, Clone, Copy)]
pub struct Chunks<'a> {
    pub item_size: usize,
    pub shape: &'a [u64],
    pub inner_order: Option<&'a [usize]>,
    pub read_shape: Option<&'a [u64]>,
}

/// A given option of `codec`, or `default`.
fn or(codec: &CodecSpec, key: &str, default: Value) -> Value {
    codec.json(key).cloned().unwrap_or(default)
}

/// The resolved JSON of a bytes -> bytes codec; `item_size`: the size of
/// the items of the bytes it encodes, where known.
fn resolve_b2b(codec: &CodecSpec, item_size: Option<usize>, at: &str) -> Result<Value> {
    Ok(match codec.name.as_str() {
        _ if codec.extension => codec.to_json(),
        "gzip" => json!({"name": "gzip", "configuration": {"level": or(codec, "level", json!(6))}}),
        "zstd" => json!({"name": "zstd", "configuration": {
            "level": or(codec, "level", json!(3)),
            "checksum": or(codec, "checksum", json!(false)),
        }}),
        "blosc" => resolve_blosc(codec, item_size, at)?,
        _ => json!({"name": codec.name}),
    })
}

/// blosc's options: a shuffle by the items' size where it is known.
fn resolve_blosc(codec: &CodecSpec, item_size: Option<usize>, at: &str) -> Result<Value> {
    let mut shuffle = codec.json("shuffle").and_then(Value::as_str);
    let mut typesize = codec.json("typesize").and_then(Value::as_u64);
    if shuffle != Some("noshuffle") && typesize.is_none() {
        match item_size.filter(|&n| n <= 255) {
            Some(n) => typesize = Some(n as u64),
            None if shuffle.is_none() => (shuffle, typesize) = (Some("noshuffle"), Some(1)),
            None => return Err(fail(
                at,
                "typesize must be given: the size of the items blosc compresses here is not known",
            )),
        }
    }
    let typesize = typesize.filter(|&t| t != 0).unwrap_or(1);
    let shuffle = shuffle.unwrap_or(if typesize == 1 {
        "bitshuffle"
    } else {
        "shuffle"
    });
    let mut config = Map::new();
    config.insert("cname".into(), or(codec, "cname", json!("lz4")));
    config.insert("clevel".into(), or(codec, "clevel", json!(5)));
    config.insert("shuffle".into(), json!(shuffle));
    config.insert("blocksize".into(), or(codec, "blocksize", json!(0)));
    if shuffle != "noshuffle" {
        config.insert("typesize".into(), json!(typesize));
    }
    Ok(json!({"name": "blosc", "configuration": config}))
}

impl ChainSpec {
    /// The complete `codecs` member TensorStore writes for this chain on
    /// `chunks`: a requested storage order of their elements may add a
    /// transpose before the innermost `bytes` codec. `at`: the chain's path.
    pub fn resolve(&self, chunks: Chunks<'_>, at: &str) -> Result<Vec<Value>> {
        let rank = chunks.shape.len();
        let mut out = Vec::new();
        let mut shape = chunks.shape.to_vec();
        let mut order = chunks.inner_order.map(<[usize]>::to_vec);
        let mut read_shape = chunks.read_shape.map(<[u64]>::to_vec);
        for (i, c) in self.array_to_array.iter().enumerate() {
            if c.extension {
                out.push(c.to_json());
                continue;
            }
            let perm = resolve_order(c.json("order").unwrap_or(&Value::Null), rank)?;
            let perm_at = member(&item(at, i), "configuration.order");
            if perm.len() != rank {
                let n = perm.len();
                return Err(fail(
                    &perm_at,
                    format!("{perm:?} has {n} dimensions, the array has {rank}"),
                ));
            }
            out.push(json!({"name": "transpose", "configuration": {"order": perm}}));
            shape = permute(&shape, &perm, &perm_at)?;
            read_shape = read_shape
                .map(|r| permute(&r, &perm, &perm_at))
                .transpose()?;
            let inv = invert(&perm);
            order = order.map(|o| permute(&inv, &o, &perm_at)).transpose()?;
        }
        let bytes = CodecSpec::named("bytes")?;
        let a2b = self.array_to_bytes.as_ref().unwrap_or(&bytes);
        let a2b_at = item(at, self.array_to_array.len());
        let inner = Chunks {
            shape: &shape,
            inner_order: order.as_deref(),
            read_shape: read_shape.as_deref(),
            ..chunks
        };
        if a2b.extension {
            out.push(a2b.to_json());
        } else if a2b.name == "sharding_indexed" {
            out.push(resolve_sharding(a2b, inner, &a2b_at)?);
        } else {
            out.extend(resolve_bytes(a2b, inner));
        }
        // as TensorStore's messages count them: past what is resolved so far
        let mut item_size = Some(chunks.item_size);
        for (j, c) in self.bytes_to_bytes.iter().enumerate() {
            let index = out.len().saturating_add(j);
            out.push(resolve_b2b(c, item_size.take(), &item(at, index))?);
        }
        Ok(out)
    }

    /// The chain a new array's chunks of `chunks.shape` get, read in chunks
    /// of `chunks.read_shape`: read chunks smaller than the chunks need a
    /// sharding codec, added (holding this chain) when this chain has none.
    pub fn resolve_new(&self, chunks: Chunks<'_>) -> Result<Vec<Value>> {
        let read_shape = chunks.read_shape.unwrap_or(chunks.shape);
        if read_shape == chunks.shape || self.sharding().is_some() {
            return self.resolve(chunks, "metadata.codecs");
        }
        let mut sharding = CodecSpec::named("sharding_indexed")?;
        let shape = Opt::Json(Value::from(read_shape.to_vec()));
        sharding.options.insert("chunk_shape".into(), shape);
        if self.codecs().next().is_some() {
            sharding
                .options
                .insert("codecs".into(), Opt::Chain(self.clone()));
        }
        let sharded = ChainSpec {
            array_to_bytes: Some(sharding),
            ..ChainSpec::default()
        };
        sharded.resolve(chunks, "metadata.codecs")
    }
}

/// The `bytes` codec (with its `endian` where the items have a byte order),
/// after the transpose a requested storage order needs.
fn resolve_bytes(codec: &CodecSpec, chunks: Chunks<'_>) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(order) = chunks.inner_order {
        if !order.iter().copied().eq(0..chunks.shape.len()) {
            out.push(json!({"name": "transpose", "configuration": {"order": order}}));
        }
    }
    out.push(if chunks.item_size <= 1 {
        json!({"name": "bytes"})
    } else {
        let endian = or(codec, "endian", json!("little"));
        json!({"name": "bytes", "configuration": {"endian": endian}})
    });
    out
}

/// A sharding codec's options: the inner chunk shape (given, the read chunk
/// shape, or the whole shard), its chains resolved, `index_location` where
/// it is not the default.
fn resolve_sharding(codec: &CodecSpec, chunks: Chunks<'_>, at: &str) -> Result<Value> {
    let shard = chunks.shape;
    let given: Option<Vec<u64>> = codec
        .json("chunk_shape")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_u64).collect());
    let inner = given
        .filter(|s| !s.is_empty())
        .or_else(|| {
            chunks
                .read_shape
                .filter(|s| !s.is_empty())
                .map(<[u64]>::to_vec)
        })
        .unwrap_or_else(|| shard.to_vec());
    let shape_at = member(at, "configuration.chunk_shape");
    if inner.len() != shard.len() {
        let (n, m) = (inner.len(), shard.len());
        return Err(fail(
            &shape_at,
            format!("{inner:?} has {n} dimensions, the array has {m}"),
        ));
    }
    if chunks_per_shard(shard, &inner).is_none() {
        return Err(fail(
            &shape_at,
            format!("the inner chunk shape {inner:?} does not divide the shard shape {shard:?}"),
        ));
    }
    let default_index;
    let index = match codec.chain("index_codecs") {
        Some(index) => index,
        None => {
            default_index = ChainSpec::parse(&default_index_codecs(), "index_codecs", false)?;
            &default_index
        }
    };
    let mut index_shape = inner.clone();
    index_shape.push(2);
    let sub = codec.chain("codecs").cloned().unwrap_or_default();
    let inner_chunks = Chunks {
        shape: &inner,
        read_shape: None,
        ..chunks
    };
    let index_chunks = Chunks {
        item_size: 8,
        shape: &index_shape,
        inner_order: None,
        read_shape: None,
    };
    let mut config = Map::new();
    config.insert("chunk_shape".into(), json!(inner));
    let codecs = sub.resolve(inner_chunks, &member(at, "configuration.codecs"))?;
    config.insert("codecs".into(), Value::from(codecs));
    let index = index.resolve(index_chunks, &member(at, "configuration.index_codecs"))?;
    config.insert("index_codecs".into(), Value::from(index));
    if let Some(location) = codec
        .json("index_location")
        .filter(|l| *l != DEFAULT_INDEX_LOCATION)
    {
        config.insert("index_location".into(), location.clone());
    }
    Ok(json!({"name": "sharding_indexed", "configuration": config}))
}

/// Stored codecs as TensorStore reports them in a schema: a sharding codec
/// states its (default) `index_location`, in its inner chain too.
pub fn with_index_location(codecs: &Value) -> Value {
    let mut out = codecs.clone();
    for codec in out.as_array_mut().into_iter().flatten() {
        let Some(codec) = codec.as_object_mut() else {
            continue;
        };
        if codec.get("name").and_then(Value::as_str) != Some("sharding_indexed") {
            continue;
        }
        let config = codec
            .entry("configuration")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(config) = config.as_object_mut() {
            config
                .entry("index_location")
                .or_insert_with(|| json!(DEFAULT_INDEX_LOCATION));
            let inner = config
                .get("codecs")
                .map_or(Value::Null, with_index_location);
            config.insert("codecs".into(), inner);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn parse(v: Value) -> ChainSpec {
        ChainSpec::parse(&v, "m", false).unwrap()
    }

    fn parse_err(v: Value) -> String {
        ChainSpec::parse(&v, "m", false).unwrap_err().message
    }

    fn chunks<'a>(item_size: usize, shape: &'a [u64], read: &'a [u64]) -> Chunks<'a> {
        Chunks {
            item_size,
            shape,
            inner_order: None,
            read_shape: Some(read),
        }
    }

    #[test]
    fn codecs_are_parsed_by_the_registrys_tensorstore_members() {
        let chain = parse(json!([{"name": "transpose", "configuration": {"order": "F"}}, "gzip"]));
        assert_eq!(
            chain.to_json(),
            json!([{"name": "transpose", "configuration": {"order": "F"}}, {"name": "gzip"}])
        );
        assert!(chain.array_to_bytes.is_none());
        // extensions are kept as given; a null configuration is none
        let v = json!([{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}, {"name": "bytes", "configuration": null}]);
        assert_eq!(
            parse(v).to_json(),
            json!([{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}, {"name": "bytes"}])
        );
        for (codec, message) in [
            (json!({"name": "gzip", "configuration": {"level": 10}}), "m[0].configuration.level: expected an integer in the range [0, 9], got 10"),
            (json!({"name": "blosc", "configuration": {"blocksize": -1}}), "range [0, +inf], got -1"),
            (json!({"name": "bytes", "configuration": {"endian": "x"}}), "expected one of ['little', 'big'], got 'x'"),
            (json!({"name": "blosc", "configuration": {"cname": 1}}), "m[0].configuration.cname: expected a string, got 1"),
            (json!({"name": "zstd", "configuration": {"checksum": 1}}), "expected true or false, got 1"),
            (json!({"name": "transpose", "configuration": {"order": [0, 0]}}), "expected a permutation, \"C\" or \"F\", got [0,0]"),
            (json!({"name": "transpose"}), "m[0].configuration: the transpose codec needs member \"order\""),
            (json!({"name": "gzip", "configuration": {"lvl": 1}}), "unknown member(s) 'lvl'; expected only ['level']"),
            (json!({"name": "nope"}), "m[0].name: 'nope' is not a registered codec; expected one of ['bitround', 'blosc', "),
            (json!({"name": "numcodecs.pickle"}), "'numcodecs.pickle' is not a registered codec"),
            (json!({"configuration": {}}), "m[0]: missing member \"name\""),
            (json!({"name": "gzip", "x": 1}), "m[0]: unknown member(s) 'x'"),
        ] {
            let got = parse_err(json!([codec]));
            assert!(got.contains(message), "{codec}: {got}");
        }
        // the cnames TensorStore takes: snappy too, sorted among the others
        let got = parse_err(json!([{"name": "blosc", "configuration": {"cname": "x"}}]));
        assert!(
            got.contains("['blosclz', 'lz4', 'lz4hc', 'snappy', 'zlib', 'zstd']"),
            "{got}"
        );
        assert!(parse_err(json!({"a": 1})).contains("m: expected a JSON array"));
    }

    #[test]
    fn the_order_of_a_partial_chain_is_the_registrys() {
        let t = json!({"name": "transpose", "configuration": {"order": [0]}});
        for (codecs, message) in [
            (
                json!(["gzip", t]),
                "m[1]: the array -> array codec 'transpose' must come before the others",
            ),
            (
                json!(["bytes", "gzip", t]),
                "m[2]: the array -> array codec 'transpose' must come before the others",
            ),
            (
                json!(["gzip", "bytes"]),
                "m[1]: the array -> bytes codec 'bytes' must come before the bytes -> bytes codecs",
            ),
            (
                json!(["bytes", "gzip", "bytes"]),
                "m[2]: a second array -> bytes codec 'bytes'",
            ),
        ] {
            assert_eq!(parse_err(codecs), message);
        }
        let partial = json!([t, "gzip"]);
        assert!(ChainSpec::parse(&partial, "m", false).is_ok());
        let err = ChainSpec::parse(&partial, "m", true).unwrap_err();
        assert_eq!(
            (err.kind, err.message.as_str()),
            (ErrorKind::Spec, "m: missing the array -> bytes codec")
        );
    }

    #[test]
    fn a_schema_codec_names_the_zarr3_driver() {
        let chain =
            ChainSpec::from_schema_codec(&json!({"driver": "zarr3", "codecs": ["gzip"]}), "schema");
        assert_eq!(chain.unwrap().unwrap().to_json(), json!([{"name": "gzip"}]));
        assert_eq!(
            ChainSpec::from_schema_codec(&json!({}), "schema").unwrap(),
            None
        );
        let err = ChainSpec::from_schema_codec(&json!({"driver": "zarr"}), "schema").unwrap_err();
        assert_eq!(
            err.message,
            "schema.codec.driver: expected \"zarr3\" for the zarr3 driver, got 'zarr'"
        );
        let err = ChainSpec::from_schema_codec(&json!({"x": 1}), "schema").unwrap_err();
        assert!(err
            .message
            .starts_with("schema.codec: unknown member(s) 'x'"));
    }

    fn merge(a: Value, b: Value, strict: bool, rank: Option<usize>) -> Result<Value> {
        parse(a)
            .merge(&parse(b), "w", strict, rank)
            .map(|c| c.to_json())
    }

    #[test]
    fn merging_fills_in_what_one_side_leaves_out() {
        let gzip1 = json!({"name": "gzip", "configuration": {"level": 1}});
        let merged = merge(json!(["bytes", "gzip"]), json!([gzip1]), true, None).unwrap();
        assert_eq!(merged, json!([{"name": "bytes"}, gzip1]));
        // "C" is the identity permutation once the rank is known
        let t = |o: Value| json!({"name": "transpose", "configuration": {"order": o}});
        assert!(merge(
            json!([t(json!("C"))]),
            json!([t(json!([0, 1]))]),
            true,
            Some(2)
        )
        .is_ok());
        let err = merge(
            json!([t(json!("C"))]),
            json!([t(json!([1, 0]))]),
            true,
            Some(2),
        )
        .unwrap_err();
        assert_eq!(err.kind, ErrorKind::SpecMismatch);
        assert!(
            err.message
                .starts_with("w[0]: cannot merge codec constraints"),
            "{}",
            err.message
        );
        assert!(
            err.message
                .ends_with("incompatible \"order\": 'C' vs [1,0]"),
            "{}",
            err.message
        );
        // without the rank, the orders are compared as given
        assert!(merge(
            json!([t(json!("C"))]),
            json!([t(json!([0, 1]))]),
            true,
            None
        )
        .is_err());
        let err = merge(json!(["gzip"]), json!(["zstd"]), true, None).unwrap_err();
        assert!(err.message.ends_with("different codecs"), "{}", err.message);
        let err = merge(json!(["gzip"]), json!([]), true, None).unwrap_err();
        assert!(err
            .message
            .ends_with("mismatch in number of bytes -> bytes codecs (1 vs 0)"));
        // the first codecs that differ are named, in chain order
        let err = merge(
            json!([t(json!([0])), "gzip"]),
            json!([t(json!([1, 0])), "zstd"]),
            true,
            None,
        );
        assert!(err.unwrap_err().message.starts_with("w[0]:"));
        // extensions: configurations equal, or one of them left out
        let delta = json!({"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}});
        let bare = json!({"name": "numcodecs.delta"});
        assert_eq!(
            merge(json!([bare]), json!([delta]), true, None).unwrap(),
            json!([delta])
        );
        let other = json!({"name": "numcodecs.delta", "configuration": {"dtype": "<i2"}});
        let err = merge(json!([delta]), json!([other]), true, None).unwrap_err();
        assert!(err.message.ends_with("configurations differ"));
    }

    #[test]
    fn unless_strict_a_chain_may_describe_the_inner_chunks_or_add_a_transpose() {
        let t = json!({"name": "transpose", "configuration": {"order": [1, 0]}});
        let sharded =
            json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2]}}]);
        let inner = json!([t, "bytes", "gzip"]);
        let merged = merge(sharded.clone(), inner.clone(), false, Some(2)).unwrap();
        assert_eq!(
            merged,
            json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2], "codecs": [t, {"name": "bytes"}, {"name": "gzip"}]}}])
        );
        assert_eq!(
            merge(inner.clone(), sharded.clone(), false, Some(2)).unwrap(),
            merged
        );
        assert!(merge(sharded, inner, true, Some(2)).is_err());
        // one more transpose at the end of either side's array -> array codecs
        assert_eq!(
            merge(json!(["bytes"]), json!([t]), false, None).unwrap(),
            json!([t, {"name": "bytes"}])
        );
        assert_eq!(
            merge(json!([t]), json!([]), false, None).unwrap(),
            json!([t])
        );
        assert!(merge(json!([t]), json!([]), true, None).is_err());
    }

    #[test]
    fn the_layout_a_chain_decodes() {
        let t = |o: Value| json!({"name": "transpose", "configuration": {"order": o}});
        let layout = |v: Value, rank| parse(v).decoded_layout(rank);
        assert_eq!(
            layout(json!(["gzip"]), 2).unwrap(),
            DecodedLayout::default()
        );
        let f = layout(json!([t(json!("F"))]), 3).unwrap();
        assert_eq!(f.inner_order, Some(vec![2, 1, 0]));
        let whole = layout(json!([t(json!([1, 0])), "bytes"]), 2).unwrap();
        assert_eq!(
            (whole.inner_order, whole.read_is_whole_chunk),
            (Some(vec![1, 0]), true)
        );
        let sharded = json!([t(json!([1, 0])), {"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2, 3], "codecs": [t(json!([1, 0])), "bytes"]}}]);
        let got = layout(sharded, 2).unwrap();
        assert_eq!(got.read_chunk_shape, Some(vec![3, 2]));
        assert_eq!(got.inner_order, Some(vec![0, 1]));
        assert!(!got.read_is_whole_chunk);
        let err = layout(json!([t(json!([1, 0]))]), 3).unwrap_err();
        assert_eq!(
            err.message,
            "codecs: transpose order [1, 0] does not have rank 3"
        );
        let err = layout(
            json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2]}}]),
            2,
        );
        assert_eq!(
            err.unwrap_err().message,
            "codecs: sharding chunk_shape [2] does not have rank 2"
        );
        // a rank no array has is refused, not allocated
        let c = json!([t(json!("C"))]);
        let err = parse(c.clone()).decoded_layout(usize::MAX).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Memory);
        let err = parse(c.clone()).merge(&parse(c), "w", true, Some(usize::MAX));
        assert_eq!(err.unwrap_err().kind, ErrorKind::Memory);
    }

    fn resolve(v: Value, c: Chunks<'_>) -> Result<Value> {
        parse(v).resolve_new(c).map(Value::from)
    }

    #[test]
    fn resolving_chooses_what_tensorstore_chooses() {
        let got = resolve(json!(["gzip", "zstd"]), chunks(4, &[8], &[8])).unwrap();
        let zstd = json!({"name": "zstd", "configuration": {"level": 3, "checksum": false}});
        let gzip = json!({"name": "gzip", "configuration": {"level": 6}});
        let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
        assert_eq!(got, json!([bytes, gzip, zstd]));
        // one-byte items have no byte order
        assert_eq!(
            resolve(json!([]), chunks(1, &[8], &[8])).unwrap(),
            json!([{"name": "bytes"}])
        );
        // blosc shuffles by the items' size, when it knows it
        let blosc = |c: Value| json!({"name": "blosc", "configuration": c});
        let got = resolve(json!(["blosc", "blosc"]), chunks(4, &[8], &[8])).unwrap();
        let shuffled = blosc(
            json!({"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "blocksize": 0, "typesize": 4}),
        );
        let plain =
            blosc(json!({"cname": "lz4", "clevel": 5, "shuffle": "noshuffle", "blocksize": 0}));
        assert_eq!(got, json!([bytes, shuffled, plain]));
        let got = resolve(json!(["blosc"]), chunks(1, &[8], &[8])).unwrap();
        assert_eq!(got[1]["configuration"]["shuffle"], "bitshuffle");
        let given = json!(["gzip", {"name": "blosc", "configuration": {"shuffle": "shuffle"}}]);
        let err = resolve(given, chunks(4, &[8], &[8])).unwrap_err();
        assert!(
            err.message
                .starts_with("metadata.codecs[3]: typesize must be given"),
            "{}",
            err.message
        );
        // a transpose permutes the chunk; a storage order adds one before bytes
        let t = json!({"name": "transpose", "configuration": {"order": "F"}});
        let got = resolve(json!([t]), chunks(1, &[4, 2], &[4, 2])).unwrap();
        assert_eq!(
            got,
            json!([{"name": "transpose", "configuration": {"order": [1, 0]}}, {"name": "bytes"}])
        );
        let c = Chunks {
            inner_order: Some(&[1, 0]),
            ..chunks(1, &[4, 2], &[4, 2])
        };
        assert_eq!(resolve(json!([]), c).unwrap(), got);
        let c = Chunks {
            inner_order: Some(&[1, 0]),
            ..chunks(1, &[4, 2], &[4, 2])
        };
        assert_eq!(resolve(json!([t]), c).unwrap()[1], json!({"name": "bytes"}));
        // "F" reverses any number of dimensions
        assert!(resolve(json!([t]), chunks(1, &[4, 2, 1], &[4, 2, 1])).is_ok());
        let t2 = json!({"name": "transpose", "configuration": {"order": [1, 0]}});
        let err = resolve(json!([t2]), chunks(1, &[4], &[4])).unwrap_err();
        assert_eq!(
            err.message,
            "metadata.codecs[0].configuration.order: [1, 0] has 2 dimensions, the array has 1"
        );
    }

    #[test]
    fn read_chunks_smaller_than_chunks_are_sharded() {
        let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
        let index = json!([bytes, {"name": "crc32c"}]);
        let got = resolve(json!(["gzip"]), chunks(2, &[8, 4], &[4, 2])).unwrap();
        let inner = json!([bytes, {"name": "gzip", "configuration": {"level": 6}}]);
        let want = json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [4, 2], "codecs": inner, "index_codecs": index}}]);
        assert_eq!(got, want);
        // a sharding codec given keeps its inner chunks; index_location only when not "end"
        let given = json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2], "index_location": "start"}}]);
        let got = resolve(given, chunks(2, &[8, 4], &[4, 2])).unwrap();
        assert_eq!(got[0]["configuration"]["chunk_shape"], json!([2, 2]));
        assert_eq!(got[0]["configuration"]["index_location"], "start");
        let given = json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [3, 2]}}]);
        let err = resolve(given, chunks(2, &[8, 4], &[8, 4])).unwrap_err();
        assert_eq!(
            err.message,
            "metadata.codecs[0].configuration.chunk_shape: the inner chunk shape [3, 2] does not divide the shard shape [8, 4]"
        );
        let given = json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2]}}]);
        let err = resolve(given, chunks(2, &[8, 4], &[8, 4])).unwrap_err();
        assert!(err
            .message
            .ends_with("[2] has 1 dimensions, the array has 2"));
    }

    #[test]
    fn stored_sharding_codecs_state_their_index_location() {
        let stored = json!([{"name": "sharding_indexed", "configuration": {"chunk_shape": [2],
            "codecs": [{"name": "sharding_indexed", "configuration": {"index_location": "start"}}]}}, "x"]);
        let got = with_index_location(&stored);
        assert_eq!(got[0]["configuration"]["index_location"], "end");
        assert_eq!(
            got[0]["configuration"]["codecs"][0]["configuration"]["index_location"],
            "start"
        );
        assert_eq!(
            got[0]["configuration"]["codecs"][0]["configuration"]["codecs"],
            Value::Null
        );
        assert_eq!(got[1], "x");
        assert_eq!(with_index_location(&json!(null)), json!(null));
    }
}
