/* Every test, in the order the runner runs them. */
#ifndef ORDO_TEST_LIST_H
#define ORDO_TEST_LIST_H

#define TEST_LIST(X)                                   \
    X(migrations_produce_schema_sql)                   \
    X(migrate_is_idempotent_and_reports_versions)      \
    X(concurrent_first_opens_migrate_once)             \
    X(connection_settings)                             \
    X(newer_schema_is_refused_naming_both_versions)    \
    X(older_schema_readonly_asks_for_migrate)          \
    X(foreign_sqlite_database_is_refused)              \
    X(digest_hex_round_trip_and_sha256_vector)         \
    X(digest_hex_refuses_wrong_length_and_characters)  \
    X(batch_digest_is_sha256_of_lane_digests)          \
    X(recipe_canonical_form_and_id)                    \
    X(recipe_bad_json_is_refused_with_position)        \
    X(recipe_put_get_is_idempotent)                    \
    X(recipe_id_collision_is_refused)                  \
    X(run_create_get_list)                             \
    X(run_create_conflicts_and_bad_specs)              \
    X(segment_lane_plan_validation_names_the_numbers)  \
    X(segment_resume_closes_previous_and_records_event) \
    X(rank_bound_segment_has_one_lane_per_rank)        \
    X(steps_record_and_read_back)                      \
    X(same_step_same_digest_is_a_no_op)                \
    X(different_digest_is_a_conflict_and_never_overwrites) \
    X(bad_steps_are_refused_whole_batch)               \
    X(step_before_first_segment_or_unknown_run)        \
    X(lane_count_follows_the_segment)                  \
    X(concurrent_writers_with_their_own_connections)   \
    X(busy_ledger_waits_instead_of_failing)            \
    X(checkpoints_record_get_list)                     \
    X(checkpoint_is_idempotent_and_conflicts_are_kept) \
    X(checkpoint_bad_input)                            \
    X(events_record_and_filter)                        \
    X(garbage_file_is_not_a_ledger_and_is_left_alone)  \
    X(truncated_ledger_fails_cleanly)                  \
    X(unwritable_or_missing_paths)                     \
    X(readonly_ledger_refuses_writes)                  \
    X(cli_every_command_answers_help)                  \
    X(cli_usage_errors_exit_2)                         \
    X(cli_migrate_creates_and_reports)                 \
    X(cli_db_defaults_to_env_then_ordo_db)             \
    X(cli_runs_table_and_json)                         \
    X(cli_show_text_and_json)                          \
    X(cli_refuses_bad_ledgers)                         \
    X(shard_writes_independent_frames)                 \
    X(shard_bad_inputs)                                \
    X(index_bad_records_name_file_and_offset)          \
    X(index_truncated_zstd_names_the_frame)            \
    X(index_counts_empty_documents_and_handles_long_ones) \
    X(loader_batches_pack_exactly)                     \
    X(loader_world_sizes_give_identical_batches)       \
    X(loader_workers_change_nothing)                   \
    X(loader_resume_at_other_world_sizes_matches)      \
    X(loader_rank_binding_diverges_after_resume)       \
    X(loader_token_ratio_mixing_meets_weights)         \
    X(loader_validation_names_the_numbers)             \
    X(loader_changed_shard_refuses_resume)             \
    X(loader_checkpoints_are_small)

#endif
