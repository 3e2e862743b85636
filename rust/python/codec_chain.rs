//! PyO3 binding of the codec chain rules (`crate::codec::chain_rules`): the
//! Python metadata layer checks, completes and writes a chain with one call.
//! Values in messages are the chain's own Python objects, as `repr` writes
//! them, and configurations kept as given are copies of them (their member
//! order, zarr.json's, is kept).

use std::cell::RefCell;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyMapping, PySequence, PyString, PyTuple};
use serde_json::{Map, Value};

use super::json::{check_depth, to_py, to_value};
use super::to_py_err;
use crate::codec::chain_rules::{
    process, Chain, CodecOut, Config, DataFacts, Form, Host, NumericCodec, Path, Step,
};
use crate::error::{Error, Result};

/// The chain given (Python objects) and the Python side of the rules.
struct PyHost<'py> {
    codecs: Bound<'py, PyAny>,
    numeric: Bound<'py, PyAny>,
    copy_json: Bound<'py, PyAny>,
    /// `json.dumps` and its `default` (`_checks.json_scalar`).
    dumps: (Bound<'py, PyAny>, Bound<'py, PyAny>),
    /// The exception the Python side raised, raised again once the rules stop.
    raised: RefCell<Option<PyErr>>,
}

impl<'py> PyHost<'py> {
    /// The Python object at `path` in the chain given, if it is there.
    fn at(&self, path: &Path) -> Option<Bound<'py, PyAny>> {
        let mut obj = self.codecs.clone();
        for step in path.as_ref()? {
            obj = match *step {
                Step::Index(i) if !obj.is_instance_of::<PyString>() => {
                    obj.cast::<PySequence>().ok()?.get_item(i).ok()?
                }
                Step::Index(_) => return None,
                Step::Key(k) => {
                    let map = obj.cast::<PyMapping>().ok()?;
                    if !map.contains(k).ok()? {
                        return None;
                    }
                    map.get_item(k).ok()?
                }
            };
        }
        Some(obj)
    }

    /// `value` as the object given at `path` (a mapping as a dict), or as a
    /// new Python value when it was not given.
    fn object(&self, value: &Value, path: &Path) -> PyResult<Bound<'py, PyAny>> {
        let py = self.codecs.py();
        match self.at(path) {
            Some(obj) if !obj.is_instance_of::<PyDict>() && obj.cast::<PyMapping>().is_ok() => {
                py.get_type::<PyDict>().call1((obj,))
            }
            Some(obj) => Ok(obj),
            None => to_py(py, value),
        }
    }

    /// A copy of the configuration given at `path` (`value` when none was).
    fn given(&self, value: &Value, path: &Path) -> PyResult<Bound<'py, PyAny>> {
        self.copy_json.call1((self.object(value, path)?,))
    }

    fn keep(&self, e: PyErr) -> Error {
        *self.raised.borrow_mut() = Some(e);
        Error::metadata("raised in Python")
    }

    fn members(&self, members: &[(&str, Value)]) -> PyResult<Bound<'py, PyAny>> {
        let d = PyDict::new(self.codecs.py());
        for (k, v) in members {
            d.set_item(k, to_py(self.codecs.py(), v)?)?;
        }
        Ok(d.into_any())
    }

    fn config(&self, config: Config<Py<PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let py = self.codecs.py();
        match config {
            Config::Given(value, path) => self.given(&value, &path),
            Config::Members(members) => self.members(&members),
            Config::Host(obj) => Ok(obj.into_bound(py)),
            Config::Sharding {
                chunk_shape,
                codecs,
                index_codecs,
                index_location,
            } => {
                let d = PyDict::new(py);
                d.set_item("chunk_shape", chunk_shape)?;
                d.set_item("codecs", self.chain(codecs)?)?;
                d.set_item("index_codecs", self.chain(index_codecs)?)?;
                d.set_item("index_location", to_py(py, &index_location)?)?;
                Ok(d.into_any())
            }
        }
    }

    fn chain(&self, codecs: Vec<CodecOut<Py<PyAny>>>) -> PyResult<Bound<'py, PyList>> {
        let items = codecs
            .into_iter()
            .map(|c| self.codec(c))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(self.codecs.py(), items)
    }

    fn codec(&self, codec: CodecOut<Py<PyAny>>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(self.codecs.py());
        d.set_item("name", codec.name)?;
        let config = self.config(codec.config)?;
        if !codec.omit_empty || config.is_truthy()? {
            d.set_item("configuration", config)?;
        }
        if let Some(must_understand) = codec.must_understand {
            d.set_item("must_understand", must_understand)?;
        }
        Ok(d)
    }
}

impl Host for PyHost<'_> {
    type Config = Py<PyAny>;

    fn repr(&self, value: &Value, path: &Path) -> String {
        let repr = self.object(value, path).and_then(|o| o.repr());
        repr.map_or_else(|_| value.to_string(), |r| r.to_string())
    }

    fn type_name(&self, value: &Value, path: &Path) -> String {
        if let Some(name) = self.at(path).and_then(|o| o.get_type().name().ok()) {
            return name.to_string();
        }
        match value {
            Value::Null => "NoneType",
            Value::Bool(_) => "bool",
            Value::Number(n) if n.is_f64() => "float",
            Value::Number(_) => "int",
            Value::String(_) => "str",
            Value::Array(_) => "list",
            Value::Object(_) => "dict",
        }
        .to_string()
    }

    fn config_json(&self, value: &Value, path: &Path) -> std::result::Result<Value, String> {
        let py = self.codecs.py();
        let text = self.object(value, path).and_then(|obj| {
            let kwargs = PyDict::new(py);
            kwargs.set_item("default", &self.dumps.1)?;
            kwargs.set_item("allow_nan", false)?;
            self.dumps
                .0
                .call((obj,), Some(&kwargs))?
                .extract::<String>()
        });
        let text = text.map_err(|e| e.value(py).to_string())?;
        serde_json::from_str(&text).map_err(|e| e.to_string())
    }

    fn numeric(&self, codec: NumericCodec<'_>) -> Result<(Py<PyAny>, Option<DataFacts>)> {
        let call = || -> PyResult<(Py<PyAny>, Option<Value>)> {
            let args = (
                codec.name,
                self.given(codec.config, codec.path)?,
                self.members(codec.complete)?,
                (codec.data_type, codec.category),
                (codec.at, codec.label),
                (codec.fill, codec.form.name()),
            );
            let out = self.numeric.call1(args)?;
            let (config, facts): (Bound<'_, PyAny>, Bound<'_, PyAny>) = out.extract()?;
            let facts = if facts.is_none() {
                None
            } else {
                Some(to_value(&facts, "facts")?)
            };
            Ok((config.unbind(), facts))
        };
        let (config, facts) = call().map_err(|e| self.keep(e))?;
        Ok((
            config,
            facts.as_ref().map(DataFacts::from_json).transpose()?,
        ))
    }
}

/// `obj` as JSON for the rules to check: any mapping an object (its keys
/// their `str`), what is not JSON (bytes, sets, other objects) a value no
/// rule takes (a float); messages show the object given. Past the JSON depth
/// limit it raises, as `to_value` does.
fn lenient(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    lenient_at(obj, 0)
}

fn lenient_at(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    check_depth("codecs", depth)?;
    if let Ok(value) = to_value(obj, "codecs") {
        return Ok(value);
    }
    if let Ok(m) = obj.cast::<PyMapping>() {
        let mut out = Map::new();
        for item in m.items()?.iter() {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            out.insert(k.str()?.to_string(), lenient_at(&v, depth + 1)?);
        }
        return Ok(Value::Object(out));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let items = obj.try_iter()?;
        return items
            .map(|i| lenient_at(&i?, depth + 1))
            .collect::<PyResult<_>>()
            .map(Value::Array);
    }
    Ok(Value::from(0.5))
}

/// The codec chain `codecs` checked against chunks of the data type whose
/// facts `data_type` gives (see `DataFacts::from_json`) and `(ndim,
/// chunk_shape)` (either may be None), completed with `fill`, in `form`
/// (`"json"`, `"normalized"`, `"core"`). Messages start with `at`.
/// `numeric(name, configuration, complete, (data_type, category), (at,
/// label), (fill, form))` gives `scale_offset`'s and `cast_value`'s
/// configuration and the data type facts after it (or None).
#[pyfunction]
fn codec_chain<'py>(
    codecs: &Bound<'py, PyAny>,
    data_type: &Bound<'py, PyAny>,
    chunks: (Option<usize>, Option<Vec<usize>>),
    at: &str,
    fill: bool,
    form: &str,
    numeric: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let py = codecs.py();
    let facts = DataFacts::from_json(&to_value(data_type, "data_type")?).map_err(to_py_err)?;
    let form = Form::from_name(form)
        .ok_or_else(|| to_py_err(Error::new(crate::error::ErrorKind::Value, "unknown form")))?;
    let checks = py.import("zarrox.metadata._checks")?;
    let host = PyHost {
        codecs: codecs.clone(),
        numeric: numeric.clone(),
        copy_json: checks.getattr("copy_json")?,
        dumps: (
            py.import("json")?.getattr("dumps")?,
            checks.getattr("json_scalar")?,
        ),
        raised: RefCell::new(None),
    };
    let (ndim, chunk_shape) = chunks;
    let chain = Chain {
        facts,
        ndim,
        chunk_shape,
        at,
        fill,
        form,
    };
    match process(&host, &lenient(codecs)?, chain) {
        Ok(out) => host.chain(out),
        Err(e) => Err(host.raised.take().unwrap_or_else(|| to_py_err(e))),
    }
}

/// Add these functions to the `_core` module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(codec_chain, m)?)?;
    Ok(())
}
