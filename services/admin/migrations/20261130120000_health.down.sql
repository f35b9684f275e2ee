drop table alert_transitions;
drop table alerts;
drop table health_samples;
drop table health_rounds;
