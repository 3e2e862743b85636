use super::*;

fn s(start: Option<i128>, stop: Option<i128>, step: Option<i128>) -> Key {
    Key::Slice { start, stop, step }
}

fn all() -> Key {
    s(None, None, None)
}

fn ints(v: &[i64]) -> Key {
    Key::Array(IndexArray {
        shape: vec![v.len()],
        values: ArrayValues::Ints(Ints::I64(v.to_vec())),
        ndarray: true,
    })
}

fn bools(v: &[bool], shape: &[usize]) -> Key {
    Key::Array(IndexArray {
        shape: shape.to_vec(),
        values: ArrayValues::Bools(v.to_vec()),
        ndarray: true,
    })
}

fn slice(start: u64, stop: u64, step: u64) -> DimSelection {
    DimSelection::Slice { start, stop, step }
}

#[test]
fn basic_selections_follow_numpy() {
    let n = basic(&[Key::Int(-1), s(Some(-3), None, Some(2))], &[4, 10]).unwrap();
    assert_eq!(
        n.selection,
        Selection::Orthogonal(vec![slice(3, 4, 1), slice(7, 10, 2)])
    );
    assert_eq!(n.buffer_shape, vec![1, 2]);
    assert_eq!(n.result_shape, vec![2]);
    // an Ellipsis fills the middle; missing dimensions are whole
    let n = basic(&[Key::Int(1), Key::Ellipsis], &[4, 5, 6]).unwrap();
    assert_eq!(n.result_shape, vec![5, 6]);
    // slices clamp; an empty slice stays empty
    let n = basic(&[s(Some(8), Some(2), None)], &[10]).unwrap();
    assert_eq!(n.selection, Selection::Orthogonal(vec![slice(8, 8, 1)]));
    assert_eq!(n.result_shape, vec![0]);
}

#[test]
fn bad_basic_selections_raise_the_right_errors() {
    let e = basic(&[Key::Int(4)], &[4]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Bounds);
    assert_eq!(e.message, "index 4 is out of bounds for axis 0 with size 4");
    let e = basic(&[Key::Int(0), Key::Int(-6)], &[4, 5]).unwrap_err();
    assert_eq!(
        e.message,
        "index -6 is out of bounds for axis 1 with size 5"
    );
    let e = basic(&[s(None, None, Some(-1))], &[4]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NegativeStep);
    let e = basic(&[s(None, None, Some(0))], &[4]).unwrap_err();
    assert_eq!(
        (e.kind, e.message.as_str()),
        (ErrorKind::Value, "slice step cannot be zero")
    );
    let e = basic(&[Key::Ellipsis, Key::Ellipsis], &[4]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Index);
    let e = basic(&[Key::Int(0), Key::Int(0)], &[4]).unwrap_err();
    assert_eq!(
        e.message,
        "too many indices for array: array is 1-dimensional, but 2 were indexed"
    );
    let e = basic(&[ints(&[1])], &[4]).unwrap_err();
    assert!(e.message.ends_with("got ndarray"), "{}", e.message);
}

#[test]
fn orthogonal_selections_take_arrays_and_masks() {
    let n = orthogonal(
        &[ints(&[-1, 0, 0]), bools(&[true, false, true], &[3])],
        &[5, 3],
    )
    .unwrap();
    assert_eq!(
        n.selection,
        Selection::Orthogonal(vec![
            DimSelection::Indices(vec![4, 0, 0]),
            DimSelection::Indices(vec![0, 2])
        ])
    );
    assert_eq!(n.result_shape, vec![3, 2]);
    let e = orthogonal(&[ints(&[5])], &[5]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Bounds);
    let e = orthogonal(&[bools(&[true], &[1])], &[5]).unwrap_err();
    assert_eq!(
        e.message,
        "boolean index of length 1 does not match axis 0 of size 5"
    );
    // dimensions past i64: unsigned indices keep their value
    let big = Key::Array(IndexArray {
        shape: vec![1],
        values: ArrayValues::Ints(Ints::U64(vec![u64::MAX - 1])),
        ndarray: true,
    });
    let n = orthogonal(&[big], &[u64::MAX]).unwrap();
    assert_eq!(
        n.selection,
        Selection::Orthogonal(vec![DimSelection::Indices(vec![u64::MAX - 1])])
    );
}

#[test]
fn coordinate_selections_broadcast() {
    let col = Key::Array(IndexArray {
        shape: vec![2, 1],
        values: ArrayValues::Ints(Ints::I64(vec![0, 1])),
        ndarray: true,
    });
    let n = coordinate(&[col, ints(&[-1, 0, 2])], &[2, 3]).unwrap();
    assert_eq!(n.result_shape, vec![2, 3]);
    assert_eq!(
        n.selection,
        Selection::Points(vec![0, 2, 0, 0, 0, 2, 1, 2, 1, 0, 1, 2])
    );
    // an integer is an array of length 1
    let n = coordinate(&[Key::Int(1), Key::Int(2)], &[2, 3]).unwrap();
    assert_eq!(n.result_shape, vec![1]);
    let e = coordinate(&[all(), Key::Int(0)], &[2, 3]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::InvalidSelection);
    let e = coordinate(&[ints(&[0, 1]), ints(&[0, 1, 2])], &[2, 3]).unwrap_err();
    assert!(
        e.message.contains("could not be broadcast"),
        "{}",
        e.message
    );
}

#[test]
fn mask_selections_list_points_in_c_order() {
    let m = bools(&[false, true, true, false], &[2, 2]);
    let n = mask(&[m], &[2, 2]).unwrap();
    assert_eq!(n.selection, Selection::Points(vec![0, 1, 1, 0]));
    assert_eq!(n.result_shape, vec![2]);
    let e = mask(&[bools(&[true], &[1])], &[2, 2]).unwrap_err();
    assert_eq!(
        e.message,
        "a mask selection is one boolean array of shape (2, 2)"
    );
}

#[test]
fn block_selections_map_blocks_to_elements() {
    let grid = [
        DimGrid::Regular(4),
        DimGrid::from_runs(&[(2, 1), (5, 2)]).unwrap(),
    ];
    let n = block(&[Key::Int(-1), s(Some(1), None, None)], &[10, 11], &grid).unwrap();
    assert_eq!(
        n.selection,
        Selection::Orthogonal(vec![slice(8, 10, 1), slice(2, 11, 1)])
    );
    assert_eq!(n.result_shape, vec![2, 9]);
    let e = block(&[Key::Int(3)], &[10, 11], &grid).unwrap_err();
    assert_eq!(
        e.message,
        "block index 3 is out of bounds for axis 0 with 3 blocks"
    );
    let e = block(&[s(None, None, Some(2))], &[10, 11], &grid).unwrap_err();
    assert_eq!(
        e.message,
        "block selections support slices with step 1 only"
    );
}

#[test]
fn zarr_regions_of_slices_integers_and_points() {
    // buf[0:2, 1] = chunk[1, 0:2, 3]: an integer drops its dimension
    let r = zarr_region(
        &[Key::Int(1), s(Some(0), Some(2), None), Key::Int(3)],
        Some(&[s(Some(0), Some(2), None)]),
        &[2, 3, 4],
        &[2],
        &[],
        false,
    )
    .unwrap()
    .unwrap();
    let mut pairs = Vec::new();
    r.for_each_run(&[2, 3, 4], true, |c, b, k| pairs.push((c, b, k)));
    assert_eq!(pairs, vec![(15, 0, 1), (19, 1, 1)]);
    // coordinates inside a chunk and a 1-d output slice
    let r = zarr_region(
        &[ints(&[1, 0]), ints(&[2, -1])],
        Some(&[s(Some(3), Some(5), None)]),
        &[2, 3],
        &[6],
        &[],
        false,
    )
    .unwrap()
    .unwrap();
    let ChunkRegion::Points(p) = r else {
        panic!("points expected")
    };
    assert_eq!(p, vec![(5, 3), (2, 4)]);
    // an out-of-bounds integer is an error, mixed arrays and slices are numpy's
    let e = zarr_region(&[Key::Int(2)], Some(&[]), &[2], &[], &[], false).unwrap_err();
    assert_eq!(e.message, "index 2 is out of bounds for length 2");
    let mixed = zarr_region(
        &[ints(&[0, 1]), all()],
        Some(&[all(), all()]),
        &[2, 3],
        &[2, 3],
        &[],
        false,
    )
    .unwrap();
    assert!(mixed.is_none());
}

#[test]
fn explicit_regions_keep_spans_as_given() {
    let full = Explicit::Dims(vec![
        Key::Span {
            start: 0,
            stop: 2,
            step: 1,
        },
        Key::Span {
            start: 0,
            stop: 3,
            step: 1,
        },
    ]);
    let wide = Explicit::Dims(vec![
        Key::Span {
            start: 0,
            stop: 3,
            step: 1,
        },
        Key::Span {
            start: 0,
            stop: 3,
            step: 1,
        },
    ]);
    assert!(explicit_region(&full, Some(&full), &[2, 3], &[2, 3]).is_ok());
    let e = explicit_region(&wide, Some(&full), &[2, 3], &[2, 3]).unwrap_err();
    assert!(e.message.contains("out of bounds"), "{}", e.message);
    let e =
        explicit_region(&Explicit::Flat(Ints::I64(vec![-1])), None, &[2, 3], &[2, 3]).unwrap_err();
    assert_eq!(e.message, "negative flat index");
}
