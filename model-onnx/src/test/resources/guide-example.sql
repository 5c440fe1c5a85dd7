-- The SQL example of docs/job-authors.md, which OnnxPredictITCase runs with a model of its own at /models/scorer.onnx
SET 'table.exec.async-ml-predict.max-concurrent-operations' = '256';
SET 'pipeline.object-reuse' = 'true';

CREATE TEMPORARY TABLE events (id BIGINT, features ARRAY<FLOAT>) WITH (
  'connector' = 'datagen', 'number-of-rows' = '1000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000',
  'fields.features.length' = '4');

CREATE MODEL scorer
  INPUT (features ARRAY<FLOAT>)
  OUTPUT (scores ARRAY<FLOAT>)
  WITH ('provider' = 'onnx', 'path' = '/models/scorer.onnx', 'resource' = 'gpu',
        'batch-size' = '64', 'max-in-flight' = '2', 'timeout' = '30 s');

SELECT id, scores FROM ML_PREDICT(TABLE events, MODEL scorer, DESCRIPTOR(features),
                                  MAP['timeout', '0']);
