# GASP Figures 3 and 12: the teacher rewards against the student's pass rate (rule gasp_reward_figure).
from selfplay.pipeline.step import step
from selfplay.report import gasp
from selfplay.tracks.gasp.rewards import TeacherRewards

o, p = snakemake.output, snakemake.params
with step("gasp reward figure", snakemake.log[0]):
    gasp.reward_figure(
        p.schedules,
        p.n,
        o.png,
        o.pdf,
        o.csv,
        teacher_rewards=TeacherRewards.from_dict(p.rewards, "gasp.teacher.rewards"),
    )
