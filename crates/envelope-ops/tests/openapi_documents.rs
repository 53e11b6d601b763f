//! Issue 29: what real OpenAPI documents contain is read as it is — YAML numbers of any
//! size, 3.1 keywords of dynamic scopes, 3.0 habits in 3.1 documents, a `required` list
//! naming a property twice — each with a warning naming the place, never a refused document
//! or a dropped operation. Small documents written for this; no server is called (inputs are
//! validated before any request: an unreachable base URL tells a valid input from one the
//! schema refuses).

use envelope_ops::file::RegistryFile;
use envelope_ops::load::Loaded;
use envelope_ops::{Context, codes};
use serde_json::{Value, json};

/// Loads `doc` (written as `name`) as the source `openapi.x`.
async fn load(name: &str, doc: &str) -> Loaded {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), doc).unwrap();
    let mut file = RegistryFile::from_toml(&format!(
        "[openapi.x]\nspec = {name:?}\nbaseUrl = \"http://127.0.0.1:9\"\ntimeout = 2\n"
    ))
    .unwrap();
    file.base_dir = Some(dir.path().to_owned());
    file.load().await
}

/// The code of calling `id` with `input`: VALIDATION_ERROR when the schema refuses it, else
/// the failure of reaching the (absent) server.
async fn code(loaded: &Loaded, id: &str, input: Value) -> String {
    loaded
        .registry
        .execute(id, input, &Context::default())
        .await
        .map(|_| "OK".to_owned())
        .unwrap_or_else(|e| e.code)
}

#[tokio::test]
async fn a_yaml_number_beyond_64_bits_does_not_refuse_the_document() {
    let doc = "\
openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /a:
    get:
      operationId: ranged
      parameters:
        - name: n
          in: query
          schema: {type: integer, minimum: -9223372036854776000, maximum: 18446744073709551616}
        - name: m
          in: query
          schema: {type: integer, minimum: -170141183460469231731687303715884105729}
        - name: f
          in: query
          schema: {type: number, maximum: 1e400, minimum: '-2.5'}
      responses: {'200': {description: ok}}
  /b:
    get:
      operationId: other
      responses: {'200': {description: ok}}
";
    let loaded = load("api.yaml", doc).await;
    // Beyond a double, YAML reads `1e400` as text: no bound, said where.
    let f = "paths./a.get.parameters.2.schema";
    assert_eq!(loaded.warnings.len(), 2, "{:#?}", loaded.warnings);
    assert!(
        loaded.warnings[1].ends_with(&format!(
            "/api.yaml: {f}: maximum \"1e400\" is beyond any number: no bound"
        )),
        "{:#?}",
        loaded.warnings
    );
    assert!(
        loaded.warnings[0].ends_with(&format!(
            "/api.yaml: {f}: minimum \"-2.5\" read as the number -2.5"
        )),
        "{:#?}",
        loaded.warnings
    );
    assert_eq!(
        loaded.registry.spec("x.ranged").unwrap().input_schema["properties"]["f"],
        json!({"type": "number", "minimum": -2.5})
    );
    let spec = loaded
        .registry
        .spec("x.ranged")
        .expect("the operation is read");
    assert!(loaded.registry.spec("x.other").is_some());
    let n = &spec.input_schema["properties"]["n"];
    assert_eq!(n["minimum"].as_f64(), Some(-9.223372036854776e18), "{n}");
    assert_eq!(n["maximum"].as_f64(), Some(1.8446744073709552e19), "{n}");
    // Beyond i128 too (YAML reads it as a float).
    assert!(
        spec.input_schema["properties"]["m"]["minimum"]
            .as_f64()
            .unwrap()
            < -1e38
    );
    assert_ne!(
        code(&loaded, "x.ranged", json!({"n": 5})).await,
        codes::VALIDATION_ERROR
    );
    assert_eq!(
        code(&loaded, "x.ranged", json!({"n": "five"})).await,
        codes::VALIDATION_ERROR
    );
}

fn body_op(name: &str, schema: Value) -> Value {
    json!({"post": {
        "operationId": name,
        "requestBody": {"required": true, "content": {"application/json": {"schema": schema}}},
        "responses": {"200": {"description": "ok"}}
    }})
}

#[tokio::test]
async fn keywords_of_3_1_and_3_0_habits_are_read_with_a_warning_naming_the_place() {
    let doc = json!({
        "openapi": "3.1.0", "info": {"title": "t", "version": "1"},
        "paths": {
            "/recursive": body_op("recursive", json!({
                "$recursiveAnchor": true, "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$recursiveRef": "#"}}}
            })),
            "/dynamic": body_op("dynamic", json!({"$ref": "#/components/schemas/Tree"})),
            "/exclusive": body_op("exclusive", json!({
                "type": "object",
                "properties": {
                    "n": {"type": "integer", "minimum": 0, "exclusiveMinimum": true},
                    "m": {"type": "integer", "exclusiveMaximum": false}
                }
            })),
            "/twice": body_op("twice", json!({
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                "required": ["a", "b", "a"],
                "example": {"required": ["a", "a"]}
            })),
            "/plain": body_op("plain", json!({"type": "object"}))
        },
        "components": {"schemas": {"Tree": {
            "$dynamicAnchor": "node", "type": "object", "required": ["name"],
            "properties": {
                "name": {"type": "string"},
                "kids": {"type": "array", "items": {"$dynamicRef": "#node"}}
            }
        }}}
    });
    let loaded = load("api.json", &doc.to_string()).await;
    let mut ids: Vec<String> = loaded.registry.specs().map(|s| s.id()).collect();
    ids.sort();
    assert_eq!(
        ids,
        [
            "x.dynamic",
            "x.exclusive",
            "x.plain",
            "x.recursive",
            "x.twice"
        ],
        "no operation dropped: {:?}",
        loaded.warnings
    );
    let schema = "requestBody.content.application/json.schema";
    for (place, says) in [
        (
            format!("paths./recursive.post.{schema}"),
            "$recursiveAnchor true ignored",
        ),
        (
            format!("paths./recursive.post.{schema}.properties.kids.items"),
            "$recursiveRef \"#\" not followed: accepts anything",
        ),
        (
            "components.schemas.Tree".to_owned(),
            "$dynamicAnchor \"node\" ignored",
        ),
        (
            "components.schemas.Tree.properties.kids.items".to_owned(),
            "$dynamicRef \"#node\" not followed",
        ),
        (
            format!("paths./exclusive.post.{schema}.properties.n"),
            "a boolean exclusiveMinimum (OpenAPI 3.0's form) read as exclusiveMinimum: 0",
        ),
        (
            format!("paths./exclusive.post.{schema}.properties.m"),
            "a boolean exclusiveMaximum (OpenAPI 3.0's form) without maximum ignored",
        ),
        (
            format!("paths./twice.post.{schema}"),
            "`required` names \"a\" more than once (read once)",
        ),
    ] {
        // The source, the document, the place.
        let expected = format!("/api.json: {place}: {says}");
        assert!(
            loaded
                .warnings
                .iter()
                .any(|w| w.starts_with("openapi.x: ") && w.contains(&expected)),
            "{expected}\n{:#?}",
            loaded.warnings
        );
    }
    assert_eq!(loaded.warnings.len(), 7, "{:#?}", loaded.warnings);

    // The readings hold when inputs are checked.
    let refused = codes::VALIDATION_ERROR;
    assert_eq!(
        code(&loaded, "x.exclusive", json!({"body": {"n": 0}})).await,
        refused
    );
    assert_ne!(
        code(&loaded, "x.exclusive", json!({"body": {"n": 1}})).await,
        refused
    );
    assert_eq!(
        code(&loaded, "x.twice", json!({"body": {"b": "-"}})).await,
        refused
    );
    assert_ne!(
        code(&loaded, "x.twice", json!({"body": {"a": "-", "b": "-"}})).await,
        refused
    );
    let tree = json!({"body": {"name": "root", "kids": [{"anything": 1}]}});
    assert_ne!(code(&loaded, "x.dynamic", tree).await, refused);
    assert_eq!(
        code(&loaded, "x.dynamic", json!({"body": {"kids": []}})).await,
        refused
    );
    let nested = json!({"body": {"kids": [{"kids": []}]}});
    assert_ne!(code(&loaded, "x.recursive", nested).await, refused);
    assert_eq!(
        code(&loaded, "x.recursive", json!({"body": {"kids": 3}})).await,
        refused
    );
}

#[tokio::test]
async fn a_3_0_document_keeps_its_own_forms_without_warnings_and_many_places_are_counted() {
    let doc = json!({
        "openapi": "3.0.3", "info": {"title": "t", "version": "1"},
        "paths": {"/n": body_op("n", json!({"type": "integer", "minimum": 0, "exclusiveMinimum": true}))}
    });
    let loaded = load("api.json", &doc.to_string()).await;
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(
        code(&loaded, "x.n", json!({"body": 0})).await,
        codes::VALIDATION_ERROR
    );

    let mut paths = serde_json::Map::new();
    for i in 0..30 {
        paths.insert(
            format!("/p{i}"),
            body_op(
                &format!("p{i}"),
                json!({"type": "object", "required": ["a", "a"]}),
            ),
        );
    }
    let doc = json!({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": paths});
    let loaded = load("api.json", &doc.to_string()).await;
    assert_eq!(loaded.registry.specs().count(), 30);
    assert_eq!(loaded.warnings.len(), 21, "{:#?}", loaded.warnings);
    assert_eq!(
        loaded.warnings[20],
        "openapi.x: … and 10 more places read the same way"
    );
}
