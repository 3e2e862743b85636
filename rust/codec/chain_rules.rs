//! The rules of a zarr v3 codec chain as the metadata layer reads, checks and
//! completes it (`zarrox.metadata.codecs`): the split of each codec object,
//! each codec's checks against the array (its data type, dimensions and chunk
//! shape), the order of the chain, the recursion into `sharding_indexed`'s
//! `codecs` and `index_codecs`, and the three forms a chain is given back in
//! (`json`, `normalized`, `core`; see the Python module's docstring).
//!
//! Messages start with the document's `where` and name the member
//! (`codecs[0].configuration.endian: ...`). Values in messages are written
//! the way Python writes them (`repr`), which the [`Host`] does; the host
//! also has the rules of `scale_offset` and `cast_value`, whose scalars are
//! read the way zarr-python reads them with numpy.

use serde_json::{Map, Value};

use super::array_to_array::{bitround, reshape, transpose};
use super::array_to_bytes::sharding::chunks_per_shard;
use super::complete::complete_config;
use super::config::Members;
use super::registry::{self, check_order, Kind, OrderProblem};
use crate::error::{Error, ErrorKind, Result};

/// One step from a chain down to a value in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Index(usize),
    Key(&'static str),
}

/// Where a value is in the chain given; `None` for a value that was not
/// given (a default).
pub type Path = Option<Vec<Step>>;

fn down(path: &Path, step: Step) -> Path {
    path.as_ref().map(|p| {
        let mut p = p.clone();
        p.push(step);
        p
    })
}

/// The form a chain is given back in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Json,
    Normalized,
    Core,
}

impl Form {
    /// Its name: `"json"`, `"normalized"` or `"core"`.
    pub fn name(self) -> &'static str {
        match self {
            Form::Json => "json",
            Form::Normalized => "normalized",
            Form::Core => "core",
        }
    }

    pub fn from_name(name: &str) -> Option<Form> {
        [Form::Json, Form::Normalized, Form::Core]
            .into_iter()
            .find(|f| f.name() == name)
    }
}

/// What the rules need to know of a chunk's data type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataFacts {
    /// The data type's name, for messages (`"uint8"`, `"structured"`...).
    pub name: String,
    /// Its family (`"int"`, `"small_int"`, `"float"`, `"string"`...).
    pub category: String,
    pub item_size: usize,
    pub has_byte_order: bool,
    pub variable_length: bool,
    /// `(bits per component, components)` for packbits, if it takes the type.
    pub packbits: Option<(u64, u64)>,
    /// Whether the type is a signed integer.
    pub signed: bool,
    /// The float format's name and size (float and complex types).
    pub float_format: Option<(String, usize)>,
}

impl DataFacts {
    /// The facts of the shard index's data type.
    pub fn uint64() -> DataFacts {
        DataFacts {
            name: "uint64".into(),
            category: "int".into(),
            item_size: 8,
            has_byte_order: true,
            variable_length: false,
            packbits: Some((64, 1)),
            signed: false,
            float_format: None,
        }
    }

    /// The facts from their JSON: `{"name", "category", "item_size",
    /// "has_byte_order", "variable_length", "packbits": [bits, components] |
    /// null, "signed", "float_format": [name, size] | null}`.
    pub fn from_json(facts: &Value) -> Result<DataFacts> {
        let bad = || {
            Error::new(
                ErrorKind::Value,
                format!("malformed data type facts: {facts}"),
            )
        };
        let text = |k: &str| facts.get(k).and_then(Value::as_str).map(String::from);
        let flag = |k: &str| facts.get(k).and_then(Value::as_bool);
        let size = |v: Option<&Value>| v.and_then(Value::as_u64).map(usize::try_from);
        let pair = |k: &str| match facts.get(k) {
            Some(Value::Array(p)) if p.len() == 2 => Ok(p.first().zip(p.get(1))),
            None | Some(Value::Null) => Ok(None),
            _ => Err(bad()),
        };
        let packbits = match pair("packbits")? {
            Some((a, b)) => Some((a.as_u64().ok_or_else(bad)?, b.as_u64().ok_or_else(bad)?)),
            None => None,
        };
        let float_format = match pair("float_format")? {
            Some((n, s)) => Some((
                n.as_str().ok_or_else(bad)?.to_string(),
                size(Some(s)).ok_or_else(bad)?.map_err(|_| bad())?,
            )),
            None => None,
        };
        Ok(DataFacts {
            name: text("name").ok_or_else(bad)?,
            category: text("category").ok_or_else(bad)?,
            item_size: size(facts.get("item_size"))
                .ok_or_else(bad)?
                .map_err(|_| bad())?,
            has_byte_order: flag("has_byte_order").ok_or_else(bad)?,
            variable_length: flag("variable_length").ok_or_else(bad)?,
            packbits,
            signed: flag("signed").ok_or_else(bad)?,
            float_format,
        })
    }
}

/// A `scale_offset` or `cast_value` codec, for the host's rules.
pub struct NumericCodec<'a> {
    pub name: &'a str,
    /// Its configuration as given, and where it is.
    pub config: &'a Value,
    pub path: &'a Path,
    /// Its complete configuration (the core's defaults filled in).
    pub complete: &'a Members,
    /// The chunk's data type (name and category).
    pub data_type: &'a str,
    pub category: &'a str,
    pub at: &'a str,
    pub label: &'a str,
    pub fill: bool,
    pub form: Form,
}

/// What the rules ask of their caller.
pub trait Host {
    /// A configuration the host makes (`scale_offset`'s, `cast_value`'s).
    type Config;
    /// `value` (at `path` in the chain given) as Python's `repr` writes it.
    fn repr(&self, value: &Value, path: &Path) -> String;
    /// The name of `value`'s Python type.
    fn type_name(&self, value: &Value, path: &Path) -> String;
    /// A configuration (at `path`) as the JSON its codec reads, or why it is
    /// not JSON.
    fn config_json(&self, value: &Value, path: &Path) -> std::result::Result<Value, String>;
    /// The configuration of a `scale_offset` or `cast_value` codec in the
    /// chain's form, and the data type of the chunks it encodes to when that
    /// changes (`cast_value`).
    fn numeric(&self, codec: NumericCodec<'_>) -> Result<(Self::Config, Option<DataFacts>)>;
}

/// A configuration in the form asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Config<C> {
    /// As given (a copy), at this place in the chain (`{}` when not there).
    Given(Value, Path),
    /// These members, in this order.
    Members(Members),
    /// A sharding configuration with its chains.
    Sharding {
        chunk_shape: Vec<usize>,
        codecs: Vec<CodecOut<C>>,
        index_codecs: Vec<CodecOut<C>>,
        index_location: Value,
    },
    /// What the host made.
    Host(C),
}

/// One codec of the chain given back.
#[derive(Debug, Clone, PartialEq)]
pub struct CodecOut<C> {
    pub name: String,
    pub config: Config<C>,
    /// Whether `configuration` is left out when it is empty (zarr.json's form).
    pub omit_empty: bool,
    pub must_understand: Option<bool>,
}

/// The arguments of a chain.
#[derive(Debug, Clone)]
pub struct Chain<'a> {
    pub facts: DataFacts,
    pub ndim: Option<usize>,
    pub chunk_shape: Option<Vec<usize>>,
    /// The messages' prefix (`"zarr.json at 'a': "`).
    pub at: &'a str,
    /// Fill in defaults (creating) rather than only check (reading).
    pub fill: bool,
    pub form: Form,
}

#[derive(Debug, Clone)]
struct Ctx<'a> {
    facts: DataFacts,
    ndim: Option<usize>,
    chunk: Option<Vec<usize>>,
    at: &'a str,
    fill: bool,
    form: Form,
    index: bool,
}

impl Ctx<'_> {
    fn err(&self, msg: String) -> Error {
        Error::metadata(format!("{}{msg}", self.at))
    }
}

/// Check (and with `fill`, complete) the chain `codecs` (JSON), the value
/// at the root of the host's paths; give it back in `chain.form`.
pub fn process<H: Host>(
    host: &H,
    codecs: &Value,
    chain: Chain<'_>,
) -> Result<Vec<CodecOut<H::Config>>> {
    let ndim = chain.ndim.or(chain.chunk_shape.as_ref().map(Vec::len));
    let ctx = Ctx {
        facts: chain.facts,
        ndim,
        chunk: chain.chunk_shape,
        at: chain.at,
        fill: chain.fill,
        form: chain.form,
        index: false,
    };
    process_chain(host, ctx, codecs, &Some(Vec::new()), "codecs")
}

/// One codec object split: name, configuration (and where), must_understand.
struct Split<'v> {
    name: &'v str,
    config: Value,
    path: Path,
    must_understand: Option<bool>,
}

fn process_chain<H: Host>(
    host: &H,
    mut ctx: Ctx<'_>,
    codecs: &Value,
    path: &Path,
    label: &str,
) -> Result<Vec<CodecOut<H::Config>>> {
    let Value::Array(items) = codecs else {
        let got = host.repr(codecs, path);
        return Err(ctx.err(format!("{label}: must be an array of codecs, got {got}")));
    };
    if items.is_empty() {
        return Err(ctx.err(format!(
            "{label}: must not be empty (an array->bytes codec is required)"
        )));
    }
    let mut out = Vec::new();
    let mut kinds: Vec<(Kind, String, String)> = Vec::new();
    for (i, codec) in items.iter().enumerate() {
        let item_label = format!("{label}[{i}]");
        let split = split_codec(host, &ctx, codec, &down(path, Step::Index(i)), &item_label)?;
        let name = split.name;
        let Some(entry) = known(&ctx, &split, &item_label, host)? else {
            continue_unknown(&ctx, split, &item_label, host, &mut out)?;
            continue;
        };
        let config = if entry.is_numcodecs() {
            Config::Given(split.config.clone(), split.path.clone())
        } else {
            check_codec(host, &mut ctx, &split, &item_label)?
        };
        kinds.push((entry.kind, name.to_string(), item_label));
        out.push(emit(name, config, split.must_understand, ctx.form));
    }
    order(host, &ctx, &kinds, label)?;
    Ok(out)
}

fn split_codec<'v, H: Host>(
    host: &H,
    ctx: &Ctx<'_>,
    codec: &'v Value,
    path: &Path,
    label: &str,
) -> Result<Split<'v>> {
    let cfg_path = down(path, Step::Key("configuration"));
    let codec_map = match codec {
        Value::String(name) if name.is_empty() => {
            return Err(ctx.err(format!("{label}: codec name must not be empty")))
        }
        Value::String(name) => {
            let config = Value::Object(Map::new());
            return Ok(Split {
                name,
                config,
                path: cfg_path,
                must_understand: None,
            });
        }
        Value::Object(m) => m,
        _ => {
            let (ty, got) = (host.type_name(codec, path), host.repr(codec, path));
            return Err(ctx.err(format!(
                "{label}: a codec must be an object with a 'name' or a name string, got {ty} {got}"
            )));
        }
    };
    let name = object_name(host, ctx, codec, path, label)?;
    let config = codec_map
        .get("configuration")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    if !config.is_object() {
        let (n, got) = (
            host.repr(&name.into(), &None),
            host.repr(&config, &cfg_path),
        );
        return Err(ctx.err(format!(
            "{label}.configuration: codec {n} configuration must be an object, got {got}"
        )));
    }
    let must_understand = match codec_map.get("must_understand") {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(other) => {
            let got = host.repr(other, &down(path, Step::Key("must_understand")));
            return Err(ctx.err(format!(
                "{label}.must_understand: must be a boolean, got {got}"
            )));
        }
    };
    Ok(Split {
        name,
        config,
        path: cfg_path,
        must_understand,
    })
}

/// The name of a codec object, which has no members but its three.
fn object_name<'v, H: Host>(
    host: &H,
    ctx: &Ctx<'_>,
    codec: &'v Value,
    path: &Path,
    label: &str,
) -> Result<&'v str> {
    let codec_map = codec
        .as_object()
        .ok_or_else(|| ctx.err(format!("{label}: not an object")))?;
    let unknown: Vec<Value> = (codec_map.keys())
        .filter(|k| !["name", "configuration", "must_understand"].contains(&k.as_str()))
        .map(|k| Value::from(k.as_str()))
        .collect();
    if !unknown.is_empty() {
        let (unknown, got) = (host.repr(&unknown.into(), &None), host.repr(codec, path));
        return Err(ctx.err(format!(
            "{label}: unknown member(s) {unknown} in codec object {got}"
        )));
    }
    let Some(name) = codec_map.get("name") else {
        let got = host.repr(codec, path);
        return Err(ctx.err(format!("{label}: codec object has no 'name' member: {got}")));
    };
    match name.as_str() {
        Some(n) if !n.is_empty() => Ok(n),
        _ => {
            let got = host.repr(name, &down(path, Step::Key("name")));
            Err(ctx.err(format!(
                "{label}.name: must be a non-empty string, got {got}"
            )))
        }
    }
}

/// The registry's entry of a codec the rules take (a codec of zarrox's, or a
/// numcodecs codec the core decodes), or None; an error for a codec that
/// cannot be in a shard index.
fn known<H: Host>(
    ctx: &Ctx<'_>,
    split: &Split<'_>,
    label: &str,
    host: &H,
) -> Result<Option<&'static registry::Codec>> {
    let name = split.name;
    let entry = registry::lookup(name).filter(|e| e.implemented());
    if let Some(e) = entry {
        if ctx.index && !e.fixed_size {
            let fixed: Vec<&str> = sorted(registry::CODECS.iter().filter(|c| c.fixed_size));
            return Err(ctx.err(format!(
                "{label}: codec {} cannot be used in index_codecs (the shard index must have a \
                 fixed size: use {})",
                host.repr(&name.into(), &None),
                fixed.join(", ")
            )));
        }
    }
    Ok(entry)
}

fn sorted<'a>(codecs: impl Iterator<Item = &'a registry::Codec>) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = codecs.map(|c| c.name).collect();
    names.sort_unstable();
    names
}

/// A codec the rules do not take: kept in the document (not in the core's
/// chain) when it says `"must_understand": false`, else an error.
fn continue_unknown<C, H: Host>(
    ctx: &Ctx<'_>,
    split: Split<'_>,
    label: &str,
    host: &H,
    out: &mut Vec<CodecOut<C>>,
) -> Result<()> {
    if split.must_understand == Some(false) {
        if ctx.form != Form::Core {
            let config = Config::Given(split.config, split.path);
            out.push(emit(split.name, config, split.must_understand, ctx.form));
        }
        return Ok(());
    }
    let ours = sorted(registry::CODECS.iter().filter(|c| !c.is_numcodecs()));
    let mut ids: Vec<&str> = (registry::CODECS.iter())
        .filter(|c| c.is_numcodecs() && c.implemented())
        .filter_map(|c| c.name.strip_prefix("numcodecs."))
        .collect();
    ids.sort_unstable();
    let names = |v: &[&str]| host.repr(&v.iter().map(|&n| Value::from(n)).collect(), &None);
    Err(Error::new(
        ErrorKind::UnknownCodec,
        format!(
            "{}{label}: unsupported codec {} (zarrox supports {} and numcodecs.<id> for {})",
            ctx.at,
            host.repr(&split.name.into(), &None),
            names(&ours),
            names(&ids)
        ),
    ))
}

fn emit<C>(
    name: &str,
    config: Config<C>,
    must_understand: Option<bool>,
    form: Form,
) -> CodecOut<C> {
    let always = name.starts_with("numcodecs.")
        || registry::lookup(name).is_some_and(|e| e.always_configured);
    CodecOut {
        name: name.to_string(),
        config,
        omit_empty: form == Form::Json && !always,
        must_understand: if form == Form::Core {
            None
        } else {
            must_understand
        },
    }
}

/// The array->bytes codecs, as the message of a chain without one lists them.
fn serializers() -> Vec<&'static str> {
    // zarrox's own first, then numcodecs'
    let ours = |c: &&registry::Codec| !c.is_numcodecs();
    let theirs = |c: &&registry::Codec| c.is_numcodecs() && c.implemented();
    let all = registry::CODECS.iter();
    (all.clone().filter(ours).chain(all.filter(theirs)))
        .filter(|c| c.kind == Kind::ArrayToBytes)
        .map(|c| c.name)
        .collect()
}

/// The order of a chain, as the core's registry rules it.
fn order<H: Host>(
    host: &H,
    ctx: &Ctx<'_>,
    kinds: &[(Kind, String, String)],
    label: &str,
) -> Result<()> {
    let Some(problem) = check_order(&kinds.iter().map(|k| k.0).collect::<Vec<_>>()) else {
        return Ok(());
    };
    let names = |f: &dyn Fn(Kind) -> bool| {
        let v: Vec<Value> = kinds
            .iter()
            .filter(|k| f(k.0))
            .map(|k| Value::from(k.1.as_str()))
            .collect();
        host.repr(&v.into(), &None)
    };
    let at = |i: usize| {
        kinds
            .get(i)
            .map(|(_, n, l)| (host.repr(&n.as_str().into(), &None), l.clone()))
    };
    Err(ctx.err(match problem {
        OrderProblem::NoArrayToBytes => {
            let s = serializers();
            let (last, rest) = s.split_last().map_or(("", &[][..]), |(l, r)| (*l, r));
            format!(
                "{label}: must contain exactly one array->bytes codec ({} or {last}), found none \
                 in {}",
                rest.join(", "),
                names(&|_| true)
            )
        }
        OrderProblem::SeveralArrayToBytes => format!(
            "{label}: must contain exactly one array->bytes codec, found {}",
            names(&|k| k == Kind::ArrayToBytes)
        ),
        OrderProblem::ArrayToArrayAfter(i) => {
            let (n, l) = at(i).unwrap_or_default();
            format!("{l}: array->array codec {n} must come before the array->bytes codec")
        }
        OrderProblem::BytesToBytesBefore(i) => {
            let (n, l) = at(i).unwrap_or_default();
            format!("{l}: bytes->bytes codec {n} must come after the array->bytes codec")
        }
    }))
}

/// `[1, 2]`, as Python writes a list of integers.
fn int_list<T: std::fmt::Display>(items: &[T]) -> String {
    let items: Vec<String> = items.iter().map(T::to_string).collect();
    format!("[{}]", items.join(", "))
}

fn member<'a>(members: &'a Members, key: &str) -> Option<&'a Value> {
    members.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
}

/// One codec's configuration checked against the chunks it encodes (and in
/// the chain's form); `ctx` becomes what the next codec sees.
fn check_codec<H: Host>(
    host: &H,
    ctx: &mut Ctx<'_>,
    split: &Split<'_>,
    label: &str,
) -> Result<Config<H::Config>> {
    let r = Rules {
        host,
        split,
        label,
        cfg: split.config.as_object(),
    };
    match split.name {
        "bytes" => r.bytes(ctx),
        "transpose" => r.transpose(ctx),
        "gzip" => {
            let complete = r.complete(ctx, "gzip", 1)?;
            Ok(r.completed(ctx.fill || r.has("level"), complete))
        }
        "blosc" => {
            let size = if ctx.facts.variable_length {
                1
            } else {
                ctx.facts.item_size
            };
            let complete = r.complete(ctx, "blosc", size)?;
            Ok(r.completed(ctx.fill, complete))
        }
        "sharding_indexed" => r.sharding(ctx),
        "vlen-utf8" => r.vlen(ctx, "string"),
        "vlen-bytes" => r.vlen(ctx, "bytes"),
        "packbits" => r.packbits(ctx),
        "scale_offset" | "cast_value" => r.numeric(ctx),
        "bitround" => r.bitround(ctx),
        "reshape" => r.reshape(ctx),
        name => {
            let complete = r.complete(ctx, name, 1)?;
            Ok(r.completed(ctx.fill, complete))
        }
    }
}

/// The rules of one codec.
struct Rules<'r, 'v, H> {
    host: &'r H,
    split: &'r Split<'v>,
    label: &'r str,
    cfg: Option<&'r Map<String, Value>>,
}

impl<H: Host> Rules<'_, '_, H> {
    fn get(&self, key: &str) -> Option<&Value> {
        self.cfg.and_then(|c| c.get(key))
    }
    fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
    fn given(&self) -> Config<H::Config> {
        Config::Given(self.split.config.clone(), self.split.path.clone())
    }
    fn completed(&self, complete_it: bool, complete: Members) -> Config<H::Config> {
        if complete_it {
            Config::Members(complete)
        } else {
            self.given()
        }
    }
    fn repr_at(&self, value: &Value, key: &'static str) -> String {
        self.host
            .repr(value, &down(&self.split.path, Step::Key(key)))
    }
    fn dt(&self, ctx: &Ctx<'_>) -> String {
        self.host.repr(&ctx.facts.name.as_str().into(), &None)
    }

    /// The codec's complete configuration as its Rust codec defines it, or
    /// its error prefixed with where.
    fn complete(&self, ctx: &Ctx<'_>, name: &str, item_size: usize) -> Result<Members> {
        let config = self.host.config_json(&self.split.config, &self.split.path);
        let config = config.map_err(|e| {
            let name = self.host.repr(&name.into(), &None);
            ctx.err(format!("{}.configuration: codec {name}: {e}", self.label))
        })?;
        let codec = serde_json::json!({"name": name, "configuration": config});
        complete_config(&codec, item_size)
            .map_err(|e| Error::new(e.kind, format!("{}{}: {}", ctx.at, self.label, e.message)))
    }

    fn not_vlen(&self, ctx: &Ctx<'_>) -> Result<()> {
        if !ctx.facts.variable_length {
            return Ok(());
        }
        let vlen = if ctx.facts.category == "string" {
            "vlen-utf8"
        } else {
            "vlen-bytes"
        };
        Err(ctx.err(format!(
            "{}: codec {} cannot encode the variable-length data type {} (use '{vlen}')",
            self.label,
            self.host.repr(&self.split.name.into(), &None),
            self.dt(ctx)
        )))
    }

    fn bytes(&self, ctx: &Ctx<'_>) -> Result<Config<H::Config>> {
        let complete = self.complete(ctx, "bytes", 1)?;
        self.not_vlen(ctx)?;
        let endian = self.get("endian").filter(|v| !v.is_null());
        if ctx.facts.has_byte_order && ctx.facts.name == "structured" {
            // zarr-python writes the legacy type without "endian" (and drops one
            // given when it creates); the spec says to read that as little-endian.
            return Ok(match (ctx.form, ctx.fill) {
                (Form::Core, _) => Config::Members(complete),
                (_, true) => Config::Members(Vec::new()),
                _ => self.given(),
            });
        }
        if ctx.facts.has_byte_order {
            if endian.is_none() && !ctx.fill {
                return Err(ctx.err(format!(
                    "{}.configuration.endian: the bytes codec requires 'endian' for data type {}",
                    self.label,
                    self.dt(ctx)
                )));
            }
            return Ok(Config::Members(complete));
        }
        // One-byte, raw and byte-string types have no byte order: zarr-python
        // drops "endian" when it creates.
        Ok(if ctx.fill {
            Config::Members(Vec::new())
        } else {
            self.given()
        })
    }

    fn vlen(&self, ctx: &Ctx<'_>, category: &str) -> Result<Config<H::Config>> {
        self.complete(ctx, self.split.name, 1)?;
        if ctx.facts.category != category {
            return Err(ctx.err(format!(
                "{}: codec {} only encodes the '{category}' data type, not {}",
                self.label,
                self.host.repr(&self.split.name.into(), &None),
                self.dt(ctx)
            )));
        }
        Ok(Config::Members(Vec::new()))
    }

    fn transpose(&self, ctx: &mut Ctx<'_>) -> Result<Config<H::Config>> {
        let complete = self.complete(ctx, "transpose", 1)?;
        let order = member(&complete, "order").cloned().unwrap_or(Value::Null);
        let ints: Option<Vec<i128>> = order.as_array().and_then(|items| {
            items
                .iter()
                .map(|v| v.as_i64().map(i128::from).or(v.as_u64().map(i128::from)))
                .collect()
        });
        let Some(ints) = ints else {
            return Err(ctx.err(format!(
                "{}.configuration.order: must be an array of integers, got {}",
                self.label,
                self.host.repr(&order, &None)
            )));
        };
        let n = ctx.ndim.unwrap_or(ints.len());
        let dims: Option<Vec<usize>> = ints.iter().map(|&i| usize::try_from(i).ok()).collect();
        let Some(dims) = dims.filter(|d| transpose::is_permutation(d, n)) else {
            let range: Vec<usize> = (0..n).collect();
            return Err(ctx.err(format!(
                "{}.configuration.order: {} is not a permutation of {} (the chunks have {n} \
                 dimension(s))",
                self.label,
                int_list(&ints),
                int_list(&range)
            )));
        };
        // Later codecs see the chunk as this one encodes it.
        if let Some(chunk) = &ctx.chunk {
            let moved: Option<Vec<usize>> = dims.iter().map(|&d| chunk.get(d).copied()).collect();
            ctx.chunk = moved;
        }
        Ok(Config::Members(vec![("order", Value::from(dims))]))
    }

    /// One of packbits' bit members, given under either of its names.
    fn packbits_bit(&self, ctx: &Ctx<'_>, keys: [&'static str; 2]) -> Result<Option<u64>> {
        let given: Vec<&'static str> = keys
            .into_iter()
            .filter(|k| self.get(k).is_some_and(|v| !v.is_null()))
            .collect();
        let clabel = format!("{}.configuration", self.label);
        let key = match given.as_slice() {
            [] => return Ok(None),
            [key] => *key,
            _ => {
                let keys = self.host.repr(&Value::from(keys.to_vec()), &None);
                return Err(ctx.err(format!("{clabel}: give one of {keys}, not both")));
            }
        };
        let value = self.get(key).cloned().unwrap_or(Value::Null);
        value.as_u64().map(Some).ok_or_else(|| {
            ctx.err(format!(
                "{clabel}.{key}: must be a non-negative integer or null, got {}",
                self.repr_at(&value, key)
            ))
        })
    }

    fn packbits(&self, ctx: &Ctx<'_>) -> Result<Config<H::Config>> {
        let complete = self.complete(ctx, "packbits", 1)?;
        self.not_vlen(ctx)?;
        let Some((nbits, components)) = ctx.facts.packbits else {
            return Err(ctx.err(format!(
                "{}: codec 'packbits' does not support data type {}",
                self.label,
                self.dt(ctx)
            )));
        };
        let first = self.packbits_bit(ctx, ["first_bit", "start_bit"])?;
        let last = self.packbits_bit(ctx, ["last_bit", "end_bit"])?;
        let first = first.map_or(0, i128::from);
        let last = last.map_or(i128::from(nbits) - 1, i128::from);
        if !(first <= last && last < i128::from(nbits)) {
            return Err(ctx.err(format!(
                "{}.configuration: need first_bit <= last_bit < {nbits} (the bits of {}), got \
                 first_bit {first}, last_bit {last}",
                self.label,
                self.dt(ctx)
            )));
        }
        if ctx.form != Form::Core {
            return Ok(self.given());
        }
        let padding = member(&complete, "padding_encoding")
            .cloned()
            .unwrap_or(Value::Null);
        Ok(Config::Members(vec![
            ("padding_encoding", padding),
            ("first_bit", Value::from(first as i64)),
            ("last_bit", Value::from(last as i64)),
            // what the core needs to know of the data type
            ("bits", nbits.into()),
            ("components", components.into()),
            ("signed", ctx.facts.signed.into()),
        ]))
    }

    fn bitround(&self, ctx: &Ctx<'_>) -> Result<Config<H::Config>> {
        let complete = self.complete(ctx, "bitround", 1)?;
        let keepbits = member(&complete, "keepbits")
            .cloned()
            .unwrap_or(Value::Null);
        let facts = &ctx.facts;
        let format = facts.float_format.as_ref();
        let mantissa = format.and_then(|(name, _)| bitround::mantissa_bits(name));
        let (component, mantissa) = match (facts.category.as_str(), format, mantissa) {
            ("int" | "datetime", _, _) => (facts.item_size, None),
            ("float" | "complex", Some((_, size)), Some(m)) => (*size, Some(m)),
            _ => {
                return Err(Error::unsupported(format!(
                    "{}{}: codec 'bitround' does not support data type {}",
                    ctx.at,
                    self.label,
                    self.dt(ctx)
                )))
            }
        };
        Ok(match (ctx.form, ctx.fill) {
            (Form::Core, _) => Config::Members(vec![
                ("keepbits", keepbits),
                ("component_size", component.into()),
                ("mantissa_bits", mantissa.into()),
            ]),
            (_, true) => Config::Members(vec![("keepbits", keepbits)]),
            _ => self.given(),
        })
    }

    fn reshape(&self, ctx: &mut Ctx<'_>) -> Result<Config<H::Config>> {
        self.complete(ctx, "reshape", 1)?;
        let spec = self.get("shape").cloned().unwrap_or(Value::Null);
        let at = format!("{}.configuration.shape", self.label);
        let Value::Array(dims) = &spec else {
            let got = self.repr_at(&spec, "shape");
            return Err(ctx.err(format!("{at}: must be an array, got {got}")));
        };
        let shape = reshape::output_shape(Some(&spec), ctx.chunk.as_deref(), ctx.ndim).map_err(
            |e| match e.kind {
                ErrorKind::Metadata => ctx.err(format!("{at}: {}", e.message)),
                _ => e,
            },
        )?;
        let config = if ctx.fill || ctx.form == Form::Core {
            Config::Members(vec![("shape", spec.clone())])
        } else {
            self.given()
        };
        ctx.ndim = Some(dims.len());
        ctx.chunk = shape;
        Ok(config)
    }

    fn numeric(&self, ctx: &mut Ctx<'_>) -> Result<Config<H::Config>> {
        let name = self.split.name;
        let complete = self.complete(ctx, name, 1)?;
        let (config, facts) = self.host.numeric(NumericCodec {
            name,
            config: &self.split.config,
            path: &self.split.path,
            complete: &complete,
            data_type: &ctx.facts.name,
            category: &ctx.facts.category,
            at: ctx.at,
            label: self.label,
            fill: ctx.fill,
            form: ctx.form,
        })?;
        if let Some(facts) = facts {
            ctx.facts = facts;
        }
        Ok(Config::Host(config))
    }
}

impl<H: Host> Rules<'_, '_, H> {
    /// The inner chunk shape of a sharding configuration, checked against
    /// the array's dimensions; JSON `true` (zarr-python 3.0 and 3.2 wrote it)
    /// is 1.
    fn inner_shape(&self, ctx: &Ctx<'_>, at: &str) -> Result<Vec<usize>> {
        let raw = self.get("chunk_shape").cloned().unwrap_or(Value::Null);
        let (value, path) = match &raw {
            Value::Array(items) => {
                let ones = items.iter().map(|v| {
                    if v == &Value::Bool(true) {
                        1.into()
                    } else {
                        v.clone()
                    }
                });
                (Value::Array(ones.collect()), None)
            }
            _ => (
                raw.clone(),
                down(&self.split.path, Step::Key("chunk_shape")),
            ),
        };
        let dims: Option<Vec<usize>> = value.as_array().and_then(|items| {
            let size = |v: &Value| {
                v.as_u64()
                    .filter(|&n| n > 0)
                    .and_then(|n| usize::try_from(n).ok())
            };
            items.iter().map(size).collect()
        });
        let Some(inner) = dims else {
            let got = self.host.repr(&value, &path);
            return Err(ctx.err(format!(
                "{at}.chunk_shape: must be an array of positive integers, got {got}"
            )));
        };
        match ctx.ndim {
            Some(n) if n != inner.len() => Err(ctx.err(format!(
                "{at}.chunk_shape: has {} dimension(s), the array has {n}",
                inner.len()
            ))),
            _ => Ok(inner),
        }
    }

    fn sharding(&self, ctx: &Ctx<'_>) -> Result<Config<H::Config>> {
        let complete = self.complete(ctx, "sharding_indexed", 1)?;
        let at = format!("{}.configuration", self.label);
        let inner = self.inner_shape(ctx, &at)?;
        let mut per_shard = None;
        if let Some(chunk) = &ctx.chunk {
            let Some(mut divisions) = chunks_per_shard(chunk, &inner) else {
                return Err(ctx.err(format!(
                    "{at}.chunk_shape: inner chunk shape {} must evenly divide the shard shape {}",
                    int_list(&inner),
                    int_list(chunk)
                )));
            };
            divisions.push(2);
            per_shard = Some(divisions);
        }
        for key in ["codecs", "index_codecs"] {
            if !self.has(key) && !ctx.fill {
                return Err(ctx.err(format!("{at}: sharding_indexed requires member '{key}'")));
            }
        }
        let chain = |key: &'static str| match self.get(key) {
            Some(v) => (v.clone(), down(&self.split.path, Step::Key(key))),
            None => (member(&complete, key).cloned().unwrap_or(Value::Null), None),
        };
        let ndim = inner.len();
        let inner_ctx = Ctx {
            chunk: Some(inner.clone()),
            ndim: Some(ndim),
            index: false,
            ..ctx.clone()
        };
        let (codecs, path) = chain("codecs");
        let codecs = process_chain(
            self.host,
            inner_ctx,
            &codecs,
            &path,
            &format!("{at}.codecs"),
        )?;
        let index_ctx = Ctx {
            facts: DataFacts::uint64(),
            ndim: ndim.checked_add(1),
            chunk: per_shard,
            index: true,
            ..ctx.clone()
        };
        let (index, path) = chain("index_codecs");
        let label = format!("{at}.index_codecs");
        let index_codecs = process_chain(self.host, index_ctx, &index, &path, &label)?;
        if !ctx.fill {
            return Ok(self.given());
        }
        Ok(Config::Sharding {
            chunk_shape: inner,
            codecs,
            index_codecs,
            index_location: member(&complete, "index_location")
                .cloned()
                .unwrap_or(Value::Null),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Values written as JSON; the numeric codecs' configurations kept.
    struct Plain;

    impl Host for Plain {
        type Config = Value;
        fn repr(&self, value: &Value, _: &Path) -> String {
            value.to_string()
        }
        fn type_name(&self, _: &Value, _: &Path) -> String {
            "x".into()
        }
        fn config_json(&self, value: &Value, _: &Path) -> std::result::Result<Value, String> {
            Ok(value.clone())
        }
        fn numeric(&self, codec: NumericCodec<'_>) -> Result<(Value, Option<DataFacts>)> {
            Ok((codec.config.clone(), None))
        }
    }

    fn facts(name: &str, size: usize) -> DataFacts {
        DataFacts {
            name: name.into(),
            item_size: size,
            has_byte_order: size > 1,
            ..DataFacts::uint64()
        }
    }

    fn run(
        codecs: Value,
        form: Form,
        fill: bool,
        chunk: Option<Vec<usize>>,
    ) -> Result<Vec<CodecOut<Value>>> {
        let chain = Chain {
            facts: facts("uint16", 2),
            ndim: None,
            chunk_shape: chunk,
            at: "w: ",
            fill,
            form,
        };
        process(&Plain, &codecs, chain)
    }

    fn members(out: &CodecOut<Value>) -> &Members {
        match &out.config {
            Config::Members(m) => m,
            other => panic!("not members: {other:?}"),
        }
    }

    #[test]
    fn completes_a_chain() {
        let out = run(json!(["bytes", "zstd"]), Form::Json, true, None).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(members(&out[0]), &vec![("endian", json!("little"))]);
        assert_eq!(out[1].name, "zstd");
        assert!(out[1].omit_empty);
        assert_eq!(out[1].must_understand, None);
    }

    #[test]
    fn reading_keeps_configurations_as_given() {
        let codecs = json!([{"name": "bytes", "configuration": {"endian": "big"}},
                            {"name": "gzip", "must_understand": true}]);
        let out = run(codecs, Form::Normalized, false, None).unwrap();
        assert_eq!(
            out[1].config,
            Config::Given(
                json!({}),
                Some(vec![Step::Index(1), Step::Key("configuration")])
            )
        );
        assert_eq!(out[1].must_understand, Some(true));
        let err = run(json!(["bytes"]), Form::Normalized, false, None).unwrap_err();
        assert_eq!(err.message, "w: codecs[0].configuration.endian: the bytes codec requires 'endian' for data type \"uint16\"");
    }

    #[test]
    fn unknown_codecs_and_order() {
        let err = run(json!(["bytes", "nope"]), Form::Json, true, None).unwrap_err();
        assert_eq!(err.kind, ErrorKind::UnknownCodec);
        let ignored = json!(["bytes", {"name": "nope", "must_understand": false}]);
        assert_eq!(
            run(ignored.clone(), Form::Core, true, None).unwrap().len(),
            1
        );
        assert_eq!(run(ignored, Form::Json, true, None).unwrap().len(), 2);
        let err = run(json!(["zstd", "bytes"]), Form::Json, true, None).unwrap_err();
        assert_eq!(
            err.message,
            "w: codecs[0]: bytes->bytes codec \"zstd\" must come after the array->bytes codec"
        );
        let err = run(json!(["zstd"]), Form::Json, true, None).unwrap_err();
        assert!(
            err.message
                .starts_with("w: codecs: must contain exactly one array->bytes codec (bytes, "),
            "{}",
            err.message
        );
        assert!(run(json!([]), Form::Json, true, None).is_err());
        assert!(run(json!({"name": "bytes"}), Form::Json, true, None).is_err());
    }

    #[test]
    fn sharding_recurses_with_the_chunks_it_sees() {
        let shard = |inner: Value| {
            json!([{"name": "transpose", "configuration": {"order": [1, 0]}},
            {"name": "sharding_indexed", "configuration": {"chunk_shape": inner}}])
        };
        let out = run(shard(json!([2, 2])), Form::Core, true, Some(vec![4, 6])).unwrap();
        let Config::Sharding {
            chunk_shape,
            codecs,
            index_codecs,
            index_location,
        } = &out[1].config
        else {
            panic!("not sharding");
        };
        assert_eq!(chunk_shape, &vec![2, 2]);
        assert_eq!((codecs.len(), index_codecs.len()), (1, 2));
        assert_eq!(index_location, &json!("end"));
        let err = run(shard(json!([4, 4])), Form::Core, true, Some(vec![4, 6])).unwrap_err();
        assert!(
            err.message
                .contains("inner chunk shape [4, 4] must evenly divide the shard shape [6, 4]"),
            "{}",
            err.message
        );
        let index = json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [2], "codecs": ["bytes"], "index_codecs": ["bytes", "zstd"]}}]);
        let err = run(index, Form::Core, true, Some(vec![4])).unwrap_err();
        assert!(
            err.message
                .contains("index_codecs[1]: codec \"zstd\" cannot be used in index_codecs"),
            "{}",
            err.message
        );
    }

    #[test]
    fn data_type_rules() {
        let chain = |f: DataFacts, codecs: Value| {
            process(
                &Plain,
                &codecs,
                Chain {
                    facts: f,
                    ndim: Some(1),
                    chunk_shape: None,
                    at: "",
                    fill: true,
                    form: Form::Core,
                },
            )
        };
        let string = DataFacts {
            name: "string".into(),
            category: "string".into(),
            variable_length: true,
            has_byte_order: false,
            ..DataFacts::uint64()
        };
        assert!(chain(string.clone(), json!(["vlen-utf8"])).is_ok());
        assert!(chain(string.clone(), json!(["vlen-bytes"])).is_err());
        assert!(chain(string, json!(["bytes"]))
            .unwrap_err()
            .message
            .contains("(use 'vlen-utf8')"));
        let out = chain(
            facts("uint16", 2),
            json!([{"name": "packbits", "configuration": {"first_bit": 1}}]),
        )
        .unwrap();
        assert_eq!(member(members(&out[0]), "first_bit"), Some(&json!(1)));
        assert_eq!(member(members(&out[0]), "last_bit"), Some(&json!(63)));
        let err = chain(facts("uint16", 2), json!(["bitround", "bytes"])).unwrap_err();
        assert!(
            err.message.contains("keepbits")
                || err.kind == ErrorKind::Unsupported
                || err.kind == ErrorKind::Metadata
        );
        assert!(DataFacts::from_json(&json!({"name": "x"})).is_err());
        let round = json!({"name": "uint64", "category": "int", "item_size": 8, "has_byte_order": true,
            "variable_length": false, "packbits": [64, 1], "signed": false, "float_format": null});
        assert_eq!(DataFacts::from_json(&round).unwrap(), DataFacts::uint64());
    }
}
