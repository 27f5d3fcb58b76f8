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
    /* checkpoints and resume */                       \
    X(checkpoint_past_the_reports_is_refused_and_pending_one_held) \
    X(resume_refuses_a_tampered_checkpoint_naming_step_and_lane) \
    X(resume_checks_the_replayed_steps_against_the_ledger) \
    X(resume_after_a_crashed_resume_or_before_any_checkpoint) \
    X(service_refuses_unreached_and_holds_pending_checkpoints) \
    X(resume_from_a_forged_manifest_state_is_refused) \
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
    X(released_migrations_are_frozen)                  \
    X(every_connection_has_foreign_keys_and_busy_timeout) \
    X(ledger_path_kinds_are_checked)                   \
    X(read_only_ledgers_are_readable_and_refuse_writes) \
    X(run_ids_out_of_range_are_not_found)              \
    X(same_step_twice_in_one_batch)                    \
    X(damaged_rows_give_errors_not_crashes)            \
    X(checkpoint_lanes_follow_the_segment)             \
    X(long_recipe_names_stay_valid_utf8)               \
    X(cli_db_option_beats_environment)                 \
    X(shard_writes_independent_frames)                 \
    X(shard_bad_inputs)                                \
    X(index_bad_records_name_file_and_offset)          \
    X(index_truncated_zstd_names_the_frame)            \
    X(index_counts_empty_documents_and_handles_long_ones) \
    X(loader_batches_pack_exactly)                     \
    X(tokenizer_round_trips_and_never_emits_specials)  \
    X(tokenizer_long_piece_is_not_quadratic_and_round_trips) \
    X(tokenizer_invalid_utf8_becomes_replacement_characters) \
    X(tokenizer_bad_rank_files)                        \
    X(tokenizer_in_recipes_names_the_rank_file)        \
    X(cl100k_scanner_matches_the_published_pattern)    \
    X(llama3_scanner_matches_the_published_pattern)    \
    X(o200k_scanner_matches_the_published_pattern)     \
    X(txt_shards_are_one_document_each)                \
    X(loader_world_sizes_give_identical_batches)       \
    X(loader_workers_change_nothing)                   \
    X(loader_resume_at_other_world_sizes_matches)      \
    X(loader_rank_binding_diverges_after_resume)       \
    X(loader_token_ratio_mixing_meets_weights)         \
    X(loader_validation_names_the_numbers)             \
    X(loader_changed_shard_refuses_resume)             \
    X(loader_checkpoints_are_small)                    \
    X(loader_error_mid_batch_spends_the_loader)        \
    X(unordered_loader_takes_no_checkpoints)           \
    X(lane_rank_refuses_impossible_numbers)            \
    X(permutation_is_a_seeded_bijection)               \
    X(loader_tokens_reconstruct_the_documents)         \
    X(loader_odd_shapes_stay_elastic)                  \
    X(loader_resume_spans_chunk_order_epochs)          \
    X(recipe_weights_must_add_up_to_a_finite_number)   \
    X(index_refuses_chunks_larger_than_the_limit)      \
    X(index_nul_line_is_an_error_not_a_blank)          \
    X(compare_reports_conflicting_reports)             \
    X(resume_in_place_refuses_an_earlier_checkpoint)   \
    X(resume_state_must_fit_the_recipe_and_cover_every_lane) \
    X(loader_prefetch_and_workers_change_nothing)      \
    X(checkpoint_parsers_survive_fuzzer_finds)         \
    X(server_endpoints_answer)                         \
    X(server_refuses_bad_requests_and_stays_up)        \
    X(server_lanes_from_eight_ranks_compose_the_batch_digests) \
    X(server_reads_need_a_token_off_loopback_unless_public) \
    X(server_manifest_drives_a_resume_step_for_step)   \
    /* the HTTP layer: paths, tokens, methods, connections, heavy reads */ \
    X(server_writes_need_a_writer_token_on_every_path_spelling) \
    X(server_head_is_get_without_a_body)               \
    X(server_errors_name_what_the_client_sent_never_the_ledger_file) \
    X(server_token_list_and_revoke)                    \
    X(compare_by_blocks_equals_brute_force)            \
    X(migration_rebuilds_step_blocks)                  \
    X(step_blocks_of_large_steps_stay_in_their_run)    \
    X(lane_reports_composing_several_steps_count_each_once) \
    X(pending_lane_reports_are_checked_when_the_step_is_recorded_otherwise) \
    X(compare_reads_one_snapshot)                      \
    /* CLI messages: encodings, rank files, counts */  \
    X(library_lists_every_encoding_from_its_table)     \
    X(cli_encoding_errors_list_every_encoding)         \
    X(cli_missing_rank_files_are_named_as_such)        \
    X(cli_counts_out_of_range_say_which_values_are_valid) \
    /* the Python face: a rank's own state, index counts */ \
    X(loader_resumes_a_ranks_own_state_at_the_same_world_size) \
    X(recipe_index_counts_the_shards_it_read) \
    /* shard reading: regular files, deadlines, chunk digests, memory */ \
    X(resume_refuses_shards_that_are_not_regular_files) \
    X(manifest_url_fetch_has_a_total_deadline)          \
    X(bad_json_record_is_named_by_line_and_byte)        \
    X(shard_changed_during_a_run_stops_it_naming_the_chunk) \
    X(lane_memory_is_bounded_by_a_chunk_limit_that_scales_with_lanes) \
    /* the write path: bodies, divergences, lane reports */ \
    X(divergence_events_survive_concurrent_writers)    \
    X(request_bodies_refuse_unknown_keys_and_mixed_shapes) \
    X(lane_reports_are_refused_for_lanes_the_rank_does_not_own) \
    X(a_long_write_makes_ordo_run_wait_instead_of_failing) \
    X(lane_reports_cost_n_log_n)                       \
    X(pending_lane_reports_are_bounded_and_dropped_by_a_resume) \
    /* the rank-bound loader: re-sharding what remains at another world size */ \
    X(rank_bound_resume_delivers_each_document_once) \
    X(rank_bound_resume_with_a_shuffle_window_delivers_each_token_once) \
    X(checkpoint_units_must_ascend_below_the_base) \
    X(rank_bound_reshard_checks_the_replay_against_the_ledger) \
    /* opening indexed recipes cheaply, chunk mismatch events, pipes, crashed resumes */ \
    X(server_segment_replaces_a_crashed_resume) \
    X(indexed_recipe_opens_without_hashing_its_shards) \
    X(changed_shard_is_caught_without_hashing_the_corpus) \
    X(resume_stopped_by_a_changed_chunk_records_it_and_resumes_again) \
    X(manifest_and_shard_inputs_refuse_fifos_and_devices) \
    X(recipe_from_a_pipe_is_read_whole_and_bounded) \
    /* JSON views shared by the CLI and the service */ \
    X(json_views_are_compact_ascii_and_embed_json) \
    X(json_view_of_a_name_that_is_not_utf8_is_null)

#endif
